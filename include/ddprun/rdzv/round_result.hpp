#pragma once
// What a node gets from a formed round, and where its workers find their store.

#include "ddprun/rdzv/state.hpp"

#include <string>
#include <vector>

namespace ddprun::rdzv {

/// One formed round, as seen by this node.
struct RoundResult {
  int round = 0;
  Assignment assignment;  ///< this node's ranks and worker prefix sums
  int restarts = 0;       ///< the job's failed rounds before this one (RoundHeader::failures)
  /// The members in group-rank order when there are at most k_max_named_ids of them (for
  /// messages); empty for larger rounds, which no node reads whole.
  std::vector<NodeDesc> members;

  [[nodiscard]] int group_rank() const { return assignment.group_rank; }
  [[nodiscard]] int group_world_size() const { return assignment.group_world_size; }
};

/// Where workers find their store (MASTER_ADDR / MASTER_PORT of the round).
struct MasterEndpoint {
  std::string addr;
  int port = 0;
  bool operator==(const MasterEndpoint&) const = default;
};

}  // namespace ddprun::rdzv
