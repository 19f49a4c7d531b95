#pragma once
// Leaving out a node that keeps failing (--rdzv-conf max_node_failures), as pure functions.
// Every failed round has one root cause: the node whose failure came first (with_failure).
// When the same node was the root cause of max_node_failures failed rounds in a row and the
// round it failed in can go on without it (at least min_nodes others, counting the spares that
// waited when it failed: FailedRound::spares, so a fixed-size job with a spare may leave a node
// out too), that node withdraws:
// it records an Exclusion in the header and exits, and the others re-form without it. A
// stall counts as a failure of the node that found it. Rounds that end for membership
// reasons do not break a run of failures; a failure with another root cause does.

#include "ddprun/rdzv/settings.hpp"
#include "ddprun/rdzv/state.hpp"

#include <optional>
#include <string>

namespace ddprun::rdzv {

/// How many of the latest failed rounds in a row had `node` as their root cause.
int failure_streak(const RoundHeader& h, const std::string& node);

/// Whether `node`, a member of a round of `group_world_size` nodes that failed, is to be
/// left out now: the exclusion it records, else nullopt.
std::optional<Exclusion> decide_exclusion(const RoundHeader& h, const std::string& node,
                                          int group_world_size, const RdzvSettings& settings);

/// Records `e` (once per node); the run of failures starts over for the others.
std::optional<RoundHeader> with_exclusion(const RoundHeader& h, const Exclusion& e);

/// "node X is left out of the job: it was the root cause of 2 failed rounds in a row
/// (max_node_failures=2; last, in round 3: rank 5 failed (exitcode: 1))"; for a node that
/// failed its health checks (no failed rounds): "node X is left out of rendezvous 'job': it is
/// unhealthy (before round 4: health check failed: ...)".
std::string render_exclusion(const Exclusion& e, const RdzvSettings& settings);

/// The exclusions of `h` that `seen` (an older header's list) does not hold yet.
std::vector<Exclusion> new_exclusions(const RoundHeader& h, const std::vector<Exclusion>& seen);

}  // namespace ddprun::rdzv
