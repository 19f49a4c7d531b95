#pragma once
// RunSignal: what a running round must do, the one answer from a rendezvous' watch. The
// rendezvous core decides it (decide.hpp), the agent's Rendezvous seam passes it on unchanged
// (agent::RdzvSignal), and the supervisor turns it into the round's Outcome in one switch.

#include <string>

namespace ddprun::rdzv {

/// What the running round must do, as seen by watch(). store_lost: the store has not answered
/// for longer than the keep-alive bound, so no round can be formed again. stacks_requested:
/// another member asks for this node's workers' stacks (DynamicRendezvous::stacks_request());
/// the round goes on, and so does watching once the node has answered.
enum class RunSignal {
  none,
  membership_changed,
  peer_failed,
  closed,
  store_lost,
  stacks_requested
};

std::string to_string(RunSignal s);

}  // namespace ddprun::rdzv
