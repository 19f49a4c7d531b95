#include "ddprun/rdzv/exclusion.hpp"

#include <algorithm>

namespace ddprun::rdzv {

int failure_streak(const RoundHeader& h, const std::string& node) {
  const auto last_other = std::find_if(h.causes.rbegin(), h.causes.rend(),
                                       [&](const std::string& id) { return id != node; });
  return static_cast<int>(last_other - h.causes.rbegin());
}

std::optional<Exclusion> decide_exclusion(const RoundHeader& h, const std::string& node,
                                          int group_world_size, const RdzvSettings& settings) {
  const int streak = failure_streak(h, node);
  if (settings.max_node_failures <= 0 || streak < settings.max_node_failures || !h.failed_round ||
      h.closed) {
    return std::nullopt;
  }
  if (group_world_size - 1 + h.failed_round->spares < settings.min_nodes) {
    return std::nullopt;  // the job cannot go on without this node
  }
  return Exclusion{node, h.failed_round->round, streak, h.failed_round->reason};
}

std::optional<RoundHeader> with_exclusion(const RoundHeader& h, const Exclusion& e) {
  const bool known = std::any_of(h.excluded.begin(), h.excluded.end(),
                                 [&](const Exclusion& x) { return x.node == e.node; });
  if (h.closed || known) {
    return std::nullopt;
  }
  RoundHeader n = h;
  if (n.excluded.size() < k_max_named_ids) {
    n.excluded.push_back(e);
  }
  n.causes.clear();
  return n;
}

std::string render_exclusion(const Exclusion& e, const RdzvSettings& settings) {
  if (e.failures == 0) {  // a node that failed its health checks (exclude_unhealthy)
    return "node " + e.node + " is left out of rendezvous '" + settings.run_id +
           "': it is unhealthy (before round " + std::to_string(e.round) + ": " + e.reason + ")";
  }
  return "node " + e.node + " is left out of rendezvous '" + settings.run_id +
         "': it was the root cause of " + std::to_string(e.failures) +
         " failed rounds in a row (max_node_failures=" +
         std::to_string(settings.max_node_failures) + "; last, in round " +
         std::to_string(e.round) + ": " + (e.reason.empty() ? "its workers failed" : e.reason) +
         ")";
}

std::vector<Exclusion> new_exclusions(const RoundHeader& h, const std::vector<Exclusion>& seen) {
  std::vector<Exclusion> out;
  for (const auto& e : h.excluded) {
    if (std::find(seen.begin(), seen.end(), e) == seen.end()) {
      out.push_back(e);
    }
  }
  return out;
}

}  // namespace ddprun::rdzv
