#pragma once
// KvState: the store's key/value map, queues, parked waiters and D0 watchers. Pure: it maps
// (connection, request) to the bytes to send, without sockets or clocks (spec §2, §6.2.5).

#include "ddprun/store/limits.hpp"
#include "ddprun/store/protocol.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ddprun::store {

using ConnId = std::uint64_t;

/// Bytes for some connection other than the reply path: STOP_WAITING, watch events.
struct Delivery {
  ConnId conn = 0;
  std::string bytes;
};

/// What applying one request produced. Deliveries go out before the reply (1.13 order).
struct Effects {
  std::string reply;                        ///< to the requesting connection; may be empty
  std::vector<Delivery> deliveries;         ///< possibly also to the requesting connection
  std::optional<std::string> close_reason;  ///< set: close the requesting connection
};

struct KvLimits {
  std::size_t max_parked_waits_per_connection = k_max_parked_waits_per_connection;
  /// MULTI_GET / LIST_KEYS replies larger than this close the connection instead.
  std::size_t max_reply_bytes = k_output_hard_limit_bytes;
  /// Parked waits over all connections.
  std::size_t max_parked_waits = k_max_parked_waits;
};

/// The state shared by all connections and all dialects (one flat byte-string map).
/// WAIT/BARRIER park with a counter of missing keys; SET, ADD, APPEND, COMPARE_SET (when it
/// stores), MULTI_SET and QUEUE_PUSH (one waiter) release them. disconnect() drops a
/// connection's waiters and watchers.
class KvState {
 public:
  explicit KvState(KvLimits limits = {}) : limits_(limits) {}
  /// Keys starting with a non-empty `hidden_prefix` are left out of LIST_KEYS and
  /// GET_NUM_KEYS (an unauthenticated connection's view of a store with a token).
  Effects apply(ConnId conn, const Request& request, std::string_view hidden_prefix = {});
  void disconnect(ConnId conn);

  std::size_t num_keys() const { return map_.size(); }
  /// Bytes of stored keys, values and queue items (the memory cap's share of the data).
  std::size_t bytes() const { return bytes_; }
  /// Deletes every key starting with `prefix` (the agent clears its workers' keys between
  /// rounds); returns how many went. Parked waits are unaffected: they wait for new sets.
  std::size_t erase_prefix(std::string_view prefix);
  std::size_t parked_waits() const { return waits_.size(); }
  std::size_t parked_waits(ConnId conn) const;
  std::size_t watcher_count() const;
  std::optional<std::string> value(std::string_view key) const;

 private:
  struct Wait {
    ConnId conn = 0;
    std::size_t remaining = 0;
    std::vector<std::string> keys;
  };
  using WaitId = std::uint64_t;

  bool exists(const std::string& key) const;
  void put(const std::string& key, std::string value);
  void erase_key(std::unordered_map<std::string, std::string>::iterator it);
  void store(const std::string& key, std::string value, Effects& fx);
  void notify_watchers(const std::string& key, std::uint8_t kind, std::string_view old_value,
                       std::string_view new_value, Effects& fx);
  void wake_all(const std::string& key, Effects& fx);
  void wake_one(const std::string& key, Effects& fx);
  void release(WaitId id, Effects& fx);
  void drop_wait(WaitId id);
  void cancel_waits(ConnId conn);
  bool park(ConnId conn, std::vector<std::string> missing, Effects& fx);

  void do_compare_set(const Request& req, Effects& fx);
  void do_add(const Request& req, Effects& fx);
  void do_wait(ConnId conn, const Request& req, Effects& fx);
  void do_delete(const Request& req, Effects& fx);
  void do_append(const Request& req, Effects& fx);
  void do_watch(ConnId conn, const Request& req, Effects& fx);
  void do_queue_pop(const Request& req, Effects& fx);
  void do_list_keys(Effects& fx, std::string_view hidden_prefix) const;
  std::int64_t count_keys(std::string_view hidden_prefix) const;
  void do_barrier(ConnId conn, const Request& req, Effects& fx);
  void do_check(const Request& req, Effects& fx) const;
  void do_multi_get(const Request& req, Effects& fx) const;

  KvLimits limits_;
  std::size_t bytes_ = 0;
  std::unordered_map<std::string, std::string> map_;
  std::unordered_map<std::string, std::deque<std::string>> queues_;
  WaitId next_wait_id_ = 1;
  std::unordered_map<WaitId, Wait> waits_;
  std::unordered_map<std::string, std::vector<WaitId>> waiters_;
  std::unordered_map<ConnId, std::vector<WaitId>> conn_waits_;
  std::unordered_map<std::string, std::vector<ConnId>> watchers_;
  std::unordered_map<ConnId, std::vector<std::string>> conn_watches_;
};

/// std::stoll semantics used by ADD (spec §2.2): leading whitespace, optional sign, longest
/// digit prefix. nullopt when there are no digits or the number is out of range.
std::optional<std::int64_t> parse_stoll_prefix(std::string_view text);

}  // namespace ddprun::store
