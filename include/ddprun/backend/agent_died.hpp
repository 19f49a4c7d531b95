#pragma once
// `ddprun __agent-died <agent pid>`: hidden, run by a killed agent's guardian with the agent's
// death notice (rdzv/death_notice.hpp) on stdin. It tells the rendezvous that the node is gone
// so the others re-form at once instead of after the keep-alive bound:
//   - c10d / static: the node's heartbeat is set to read as long silent (a closer skips its
//     slot) and, when the header is in the notice's round, complete, that round ends with the
//     node lost (compare-and-set, retried a few times on a lost race);
//   - etcd-v3: the agent's lease is revoked (its keys go, the watchers wake) and the header is
//     changed the same way through the etcd Kv.
// Prints one line on stderr saying what it did, or why it could not. Every call is bounded
// (k_notice_call_timeout), and the guardian kills it after process::k_notice_wait anyway.

#include <chrono>
#include <string>
#include <vector>

namespace ddprun::backend {

inline constexpr std::chrono::milliseconds k_notice_call_timeout{2000};
/// Compare-and-sets of the header tried before giving up to the peers' own detection.
inline constexpr int k_notice_attempts = 5;
/// The longest pause after a compare-and-set of the header lost to another writer.
inline constexpr std::chrono::milliseconds k_notice_backoff_cap{100};

/// `args` is argv after "ddprun": {"__agent-died", PID}. Exit 0 when it told the rendezvous (or
/// there was nothing left to tell), 1 when it could not.
int agent_died_command(const std::vector<std::string>& args);

}  // namespace ddprun::backend
