// plan_close: the one O(nodes) decision of a round, taken by the node that claimed the close.
// Pure: what was read for slots 1..size in, the members and every slot's Assignment out.

#include "ddprun/rdzv/decide.hpp"
#include "ddprun/rdzv/rank_order.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace ddprun::rdzv {
namespace {

using Live = Candidate;

/// Reads the slots in order: who is in, and why the others are not.
std::vector<Live> live_slots(const std::vector<SlotRead>& reads, WallMs now,
                             const RdzvSettings& settings, std::vector<Assignment>& out) {
  std::vector<Live> live;
  std::set<std::string> ids;
  out.assign(reads.size(), Assignment{});
  for (std::size_t i = 0; i < reads.size(); ++i) {
    auto& a = out[i];
    const std::string& text = reads[i].node;
    auto node = decode_slot(text);
    if (text.empty()) {
      a.why = "missing";  // the node took the slot and never wrote it (died between the two)
    } else if (is_withdrawn(text)) {
      a.why = "withdrawn";
    } else if (!node) {
      a.why = "unreadable";
    } else if (is_silent(parse_heartbeat(reads[i].heartbeat), now, settings)) {
      a.why = "silent";
    } else if (!ids.insert(node->id()).second) {
      a.why = "duplicate";
    } else if (settings.segment <= 0 && static_cast<int>(live.size()) >= settings.max_nodes) {
      a.why = "late";  // with segments, who is placed is rank_order's choice
    } else {
      live.push_back(Live{static_cast<int>(i) + 1, std::move(*node)});
    }
  }
  return live;
}

std::string duplicate_rank_error(const std::vector<NodeDesc>& members) {
  std::map<int, const NodeDesc*> seen;
  for (const auto& n : members) {
    if (!n.node_index) {
      continue;
    }
    const int rank = *n.node_index;
    auto [it, fresh] = seen.emplace(rank, &n);
    if (!fresh) {
      // Named in a fixed order (by address), whichever joined first.
      const bool swap = rank_before(n, *it->second);
      const NodeDesc& first = swap ? n : *it->second;
      const NodeDesc& second = swap ? *it->second : n;
      return "--node-rank " + std::to_string(rank) + " is used by two agents: " + first.addr +
             " (pid " + std::to_string(first.pid) + ") and " + second.addr + " (pid " +
             std::to_string(second.pid) + "); each node needs its own rank";
    }
  }
  return "";
}

/// Ranks, worker prefix sums (global and per role) and the watch ring, in group-rank order.
void assign(const std::vector<Live>& ordered, ClosePlan& plan) {
  std::map<std::string, int> role_world;
  for (const auto& l : ordered) {
    plan.workers += l.node.nproc;
    role_world[l.node.role] += l.node.nproc;
  }
  std::map<std::string, int> role_base;
  int base = 0;
  const int size = static_cast<int>(ordered.size());
  for (int g = 0; g < size; ++g) {
    const auto& l = ordered[static_cast<std::size_t>(g)];
    Assignment& a = plan.assignments[static_cast<std::size_t>(l.slot - 1)];
    a.member = true;
    a.group_rank = g;
    a.group_world_size = size;
    a.worker_base = base;
    a.world_size = plan.workers;
    a.role_base = role_base[l.node.role];
    a.role_world_size = role_world[l.node.role];
    if (size > 1) {
      a.watch_id = ordered[static_cast<std::size_t>((g + 1) % size)].node.id();
    }
    base += l.node.nproc;
    role_base[l.node.role] += l.node.nproc;
    plan.members.push_back(l.node);
  }
}

}  // namespace

ClosePlan plan_close(const std::vector<SlotRead>& reads, const RoundHeader& h, WallMs now,
                     const RdzvSettings& settings) {
  ClosePlan plan;
  plan.segment = settings.segment;
  auto live = live_slots(reads, now, settings, plan.assignments);
  plan.live = static_cast<int>(live.size());
  plan.missing =
      static_cast<int>(std::count_if(plan.assignments.begin(), plan.assignments.end(),
                                     [](const Assignment& a) { return a.why == "missing"; }));
  const auto placement =
      place_nodes(live, settings.max_nodes, settings.segment, settings.unique_node_index);
  const int placed = static_cast<int>(placement.members.size());
  const bool last_call_over = h.deadline && now >= *h.deadline;
  plan.complete = placed >= settings.max_nodes || (placed >= settings.min_nodes && last_call_over);
  if (!plan.complete) {
    // Whole segments short of MIN: no last call, or it would claim again at once, forever.
    plan.keep_deadline = placed >= settings.min_nodes;
    plan.assignments.clear();
    return plan;
  }
  std::vector<Live> ordered;
  for (auto i : placement.members) {
    ordered.push_back(live[i]);
  }
  for (auto i : placement.standby) {
    plan.assignments[static_cast<std::size_t>(live[i].slot - 1)].why = "standby";
  }
  plan.standby = static_cast<int>(placement.standby.size());
  assign(ordered, plan);
  if (settings.unique_node_index) {
    plan.error = duplicate_rank_error(plan.members);
    for (auto& a : plan.assignments) {
      a.error = a.member ? plan.error : "";
    }
  }
  return plan;
}

}  // namespace ddprun::rdzv
