// Log lines and error messages of the rendezvous (pure: state in, text out).

#include "ddprun/rdzv/decide.hpp"

#include <algorithm>
#include <set>

namespace ddprun::rdzv {
namespace {

constexpr WallMs k_ms_per_second = 1000;
/// Longer node lists are cut short in messages: "a, b, ... and 4062 more".
constexpr std::size_t k_max_named_nodes = 32;

std::string expected_nodes(const RdzvSettings& settings) {
  if (settings.min_nodes == settings.max_nodes) {
    return std::to_string(settings.min_nodes);
  }
  return std::to_string(settings.min_nodes) + " to " + std::to_string(settings.max_nodes);
}

/// Whole seconds, rounded up, never negative.
std::string seconds_left(WallMs from, WallMs to) {
  WallMs left = std::max<WallMs>(0, to - from);
  return std::to_string((left + k_ms_per_second - 1) / k_ms_per_second) + "s";
}

/// "30s" for whole seconds, else "0.25s".
std::string render_duration(std::chrono::milliseconds d) {
  auto ms = d.count();
  if (ms % k_ms_per_second == 0) {
    return std::to_string(ms / k_ms_per_second) + "s";
  }
  std::string frac = std::to_string(ms % k_ms_per_second);
  frac.insert(0, 3 - frac.size(), '0');
  while (frac.back() == '0') {
    frac.pop_back();
  }
  return std::to_string(ms / k_ms_per_second) + "." + frac + "s";
}

std::string round_name(const RdzvSettings& settings, const RdzvState& state) {
  return "rendezvous " + settings.run_id + " round " + std::to_string(state.round);
}

std::vector<NodeDesc> lost_nodes(const std::vector<NodeDesc>& arrived,
                                 const std::vector<NodeDesc>& previous) {
  std::vector<NodeDesc> out;
  for (const auto& n : previous) {
    auto same = [&](const NodeDesc& a) { return a.id() == n.id(); };
    if (std::none_of(arrived.begin(), arrived.end(), same)) {
      out.push_back(n);
    }
  }
  return out;
}

/// "b left; lost c; waiting to join d": the members missing from `state` (those that left on
/// purpose apart from the rest) and the nodes waiting.
std::string membership_changes(const RdzvState& state, const std::vector<NodeDesc>& members) {
  std::vector<NodeDesc> left;
  std::vector<NodeDesc> lost;
  for (const auto& n : members) {
    if (state.participants.count(n.id()) == 0) {
      (state.left.count(n.id()) != 0 ? left : lost).push_back(n);
    }
  }
  std::vector<NodeDesc> waiting;
  for (const auto& [id, n] : state.wait_list) {
    waiting.push_back(n);
  }
  std::vector<std::string> parts;
  if (!left.empty()) {
    parts.push_back(render_node_names(left) + " left");
  }
  if (!lost.empty()) {
    parts.push_back("lost " + render_node_names(lost));
  }
  if (!waiting.empty()) {
    parts.push_back("waiting to join " + render_node_names(waiting));
  }
  std::string out;
  for (const auto& p : parts) {
    out += (out.empty() ? "" : "; ") + p;
  }
  return out;
}

}  // namespace

std::string render_node_names(const std::vector<NodeDesc>& nodes) {
  std::set<std::string> addrs;
  for (const auto& n : nodes) {
    addrs.insert(n.addr);
  }
  const bool by_addr = addrs.size() == nodes.size();
  std::string out;
  const std::size_t shown = std::min(nodes.size(), k_max_named_nodes);
  for (std::size_t i = 0; i < shown; ++i) {
    out += (out.empty() ? "" : ", ") + (by_addr ? nodes[i].addr : nodes[i].id());
  }
  if (shown < nodes.size()) {
    out += ", ... and " + std::to_string(nodes.size() - shown) + " more";
  }
  return out;
}

std::string render_progress(const RdzvState& state, const NodeDesc& self, WallMs now,
                            WallMs join_deadline, const RdzvSettings& settings) {
  if (state.complete && state.participants.count(self.id()) == 0) {
    return round_name(settings, state) + " is running with " +
           std::to_string(state.participants.size()) + " nodes (" +
           render_node_names(ordered_participants(state)) + "); " +
           std::to_string(state.wait_list.size()) + " waiting for the next round, waiting up to " +
           seconds_left(now, join_deadline);
  }
  WallMs until = state.deadline ? std::min(*state.deadline, join_deadline) : join_deadline;
  return round_name(settings, state) + ": " + std::to_string(state.participants.size()) + "/" +
         std::to_string(settings.max_nodes) + " nodes (" +
         render_node_names(ordered_participants(state)) + "), waiting up to " +
         seconds_left(now, until) + " for more";
}

std::string render_timeout(const RdzvState& state, const RdzvSettings& settings,
                           const std::vector<NodeDesc>& arrived,
                           const std::vector<NodeDesc>& previous) {
  std::string msg = round_name(settings, state) + " timed out after " +
                    render_duration(settings.join_timeout) + " (join_timeout): expected " +
                    expected_nodes(settings) + " nodes, " + std::to_string(arrived.size()) +
                    " arrived (" + render_node_names(arrived) + ")";
  auto lost = lost_nodes(arrived, previous);
  if (!lost.empty()) {
    msg += "; lost since the previous round: " + render_node_names(lost);
  }
  return msg;
}

std::string render_signal(RunSignal signal, const RdzvState& state, const NodeDesc& self, int round,
                          const std::vector<NodeDesc>& members, const RdzvSettings& settings) {
  const std::string head = "rendezvous " + settings.run_id + " round " + std::to_string(round);
  switch (signal) {
    case RunSignal::none:
      return head + ": no change";
    case RunSignal::closed:
      return head + ": the rendezvous was closed";
    case RunSignal::peer_failed:
      return head + ": node " + (state.failed_round ? state.failed_round->reporter : "?") +
             " reported a failed worker group; restarting together";
    case RunSignal::store_lost:
      return head + ": the rendezvous store is unreachable";
    case RunSignal::membership_changed:
      break;
  }
  if (state.participants.count(self.id()) == 0) {
    return head + ": this node (" + self.addr + ") was dropped from the round: no keep-alive " +
           "of it reached the store for " + render_duration(keep_alive_bound(settings)) +
           " (was the agent stopped or cut off?); it joins the next round";
  }
  return head + ": membership changed (" + membership_changes(state, members) +
         "); the group re-forms";
}

std::string render_store_lost(const RdzvSettings& settings, WallMs failing_since, WallMs now,
                              const std::string& last_error) {
  return "rendezvous " + settings.run_id + ": lost the rendezvous store: no answer for " +
         render_duration(std::chrono::milliseconds(std::max<WallMs>(0, now - failing_since))) +
         " (the keep-alive bound is " + render_duration(keep_alive_bound(settings)) +
         "), so no round can form again; last error: " + last_error;
}

std::string render_closed(const RdzvSettings& settings) {
  return "rendezvous " + settings.run_id +
         " is closed: the job already finished (or was shut down); start a new run with a "
         "different --rdzv-id";
}

}  // namespace ddprun::rdzv
