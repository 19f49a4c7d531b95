#pragma once
// RoundStore: the rendezvous's reads and waits over its Kv, shared by the executor
// (DynamicRendezvous) and its units (StacksExchange, KeepAlive, JoinProgress): reads batched
// by k_keys_per_request, a wait that a store that watches ends at a change, who took a slot
// of a round, and a round's members.

#include "ddprun/net/asio.hpp"
#include "ddprun/rdzv/kv.hpp"
#include "ddprun/rdzv/round_result.hpp"
#include "ddprun/util/clock.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace ddprun::rdzv {

/// Who took a slot of a round: counts, and the nodes of the first k_max_named_ids slots.
struct Arrivals {
  int live = 0;                      ///< slots taken minus withdrawn
  int taken = 0;                     ///< slots taken
  std::vector<NodeDesc> live_named;  ///< in rank order
  std::vector<NodeDesc> withdrawn;
};

/// `ctx`, `kv` and `clock` must outlive it and every coroutine it started.
class RoundStore {
 public:
  RoundStore(asio::io_context& ctx, Kv& kv, std::string run_id, const util::Clock& clock);

  [[nodiscard]] Kv& kv() const { return kv_; }
  [[nodiscard]] const std::string& run_id() const { return run_id_; }
  [[nodiscard]] const util::Clock& clock() const { return clock_; }
  [[nodiscard]] WallMs wall_now() const;

  asio::awaitable<Result<std::string>> read_one(std::string key);  ///< "" when missing
  asio::awaitable<Result<std::vector<std::string>>> read_many(std::vector<std::string> keys);
  asio::awaitable<void> sleep(std::chrono::milliseconds d);
  /// Waits `d`, less when one of `keys` changes first (Kv::wait_for_change); true if it did.
  asio::awaitable<bool> wait_for_others(std::vector<std::string> keys, std::chrono::milliseconds d);
  /// A slot is taken (ADD) and written (SET) in two steps, and a close can fall between them:
  /// the empty `texts` of `keys` are read again, blocking, for at most `grace` in all.
  asio::awaitable<void> fill_missing(const std::vector<std::string>& keys,
                                     std::vector<std::string>& texts,
                                     std::chrono::milliseconds grace);
  /// Who took a slot of `round` (zero counts when the store fails).
  asio::awaitable<Arrivals> arrivals(int round);
  /// The members of `round` in group-rank order: `known`'s when it is that round and names
  /// them, else read from the store; empty when they cannot be had.
  asio::awaitable<std::vector<NodeDesc>> round_members(int round, std::optional<RoundResult> known);

 private:
  asio::io_context& ctx_;
  Kv& kv_;
  std::string run_id_;
  const util::Clock& clock_;
};

}  // namespace ddprun::rdzv
