#pragma once
// The Readers of `ddprun status` (module-private): the rendezvous store of c10d and static
// through a SyncClient, and an etcd-v3 run's current generation through the rdzv module's
// EtcdKv (SignedKv with a token) on a local io_context.
//
// Opening errors are one line naming where: ErrorCode::config for settings unusable before
// anything is contacted (the password file, a TLS file), ErrorCode::io when the store or no
// etcd member could be reached or would talk to us (refused, timed out, TLS handshake, auth).

#include "ddprun/config/launch_config.hpp"
#include "ddprun/status/snapshot.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace ddprun::status {

/// Connects to the store at `ep`, authenticated with `token` when there is one; every
/// connection attempt and read is bounded by `timeout`.
Result<std::unique_ptr<Reader>> open_store_reader(const config::Endpoint& ep,
                                                  const std::optional<std::string>& token,
                                                  std::chrono::milliseconds timeout);

/// Finds run `run_id`'s current generation under settings.key_prefix the way the agents do
/// (its generation key) and reads that generation's keys, checking and stripping the
/// signatures when `token` is given. A run with no generation reads as empty (every key
/// missing). Each call to an etcd member is bounded by `timeout`.
Result<std::unique_ptr<Reader>> open_etcd_reader(const config::EtcdSettings& settings,
                                                 const std::string& run_id,
                                                 const std::optional<std::string>& token,
                                                 std::chrono::milliseconds timeout);

}  // namespace ddprun::status
