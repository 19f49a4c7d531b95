#pragma once
// The one way the round header changes: read it, apply a pure change (the with_* functions),
// compare-and-set the result, and after losing the race to another writer read again, until
// the change sticks or no longer applies. The rendezvous executor (DynamicRendezvous::update)
// and a killed agent's guardian (`ddprun __agent-died`) both go through it; each says how it
// pauses after a lost race and when it gives up.

#include "ddprun/net/asio.hpp"
#include "ddprun/rdzv/kv.hpp"
#include "ddprun/rdzv/state.hpp"
#include "ddprun/util/result.hpp"

#include <functional>
#include <optional>
#include <string>

namespace ddprun::rdzv {

/// The header after a change, or nullopt when the change does not apply to it.
using HeaderChange = std::function<std::optional<RoundHeader>(const RoundHeader&)>;

/// How update_header reads and retries.
struct HeaderUpdate {
  /// Before each try, with the compare-and-sets lost so far: true gives up (ErrorCode::timeout).
  std::function<bool(int lost)> give_up;
  /// After the `lost`-th lost compare-and-set, before reading again.
  std::function<asio::awaitable<void>(int lost)> pause;
  /// Every header read, as read (the executor notes the exclusions in it).
  std::function<void(const RoundHeader&)> seen = nullptr;
  /// What a timeout says: "rendezvous job: the state kept changing under this node".
  std::string kept_changing;
};

/// What update_header did: the header written, or the one the change no longer applied to.
struct HeaderUpdated {
  RoundHeader header;
  bool changed = false;
};

/// The header at `key` ("" or missing: an empty header) with its exact bytes, the fencing token
/// of the next compare-and-set.
struct ReadHeader {
  RoundHeader value;
  std::string token;
};
asio::awaitable<Result<ReadHeader>> read_header(Kv& kv, const std::string& key);

asio::awaitable<Result<HeaderUpdated>> update_header(Kv& kv, const std::string& key,
                                                     const HeaderChange& change,
                                                     const HeaderUpdate& how);

}  // namespace ddprun::rdzv
