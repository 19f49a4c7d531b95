// Log lines and error messages of the rendezvous (pure: state in, text out).

#include "ddprun/rdzv/decide.hpp"

#include <algorithm>
#include <set>

namespace ddprun::rdzv {
namespace {

constexpr WallMs k_ms_per_second = 1000;

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

std::string round_name(const RdzvSettings& settings, int round) {
  return "rendezvous " + settings.run_id + " round " + std::to_string(round);
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

/// Up to k_max_named_ids names of `total` nodes.
std::string names_of(const std::vector<NodeDesc>& shown, int total) {
  std::string out = render_node_names(shown);
  const int missing = total - static_cast<int>(shown.size());
  if (missing > 0 && shown.size() <= k_max_named_ids) {
    out += (out.empty() ? "" : ", ... and ") + std::to_string(missing) +
           (shown.empty() ? " nodes" : " more");
  }
  return out;
}

/// "addr_pid_local" without its last two parts.
std::string addr_of(const std::string& id) {
  auto cut = id.rfind('_');
  if (cut == std::string::npos || cut == 0) {
    return id;
  }
  cut = id.rfind('_', cut - 1);
  return cut == std::string::npos ? id : id.substr(0, cut);
}

/// "b left; lost c; waiting to join d", from what the header says ended `round`.
std::string membership_changes(const RoundHeader& h, int round) {
  std::vector<std::string> parts;
  if (h.ended.round == round && !h.ended.left.empty()) {
    parts.push_back(render_ids(h.ended.left, static_cast<int>(h.ended.left.size())) + " left");
  }
  if (h.ended.round == round && !h.ended.lost.empty()) {
    parts.push_back("lost " + render_ids(h.ended.lost, static_cast<int>(h.ended.lost.size())));
  }
  if (h.round == round && h.waiting > 0) {
    parts.push_back("waiting to join " + render_ids(h.waiting_ids, h.waiting));
  }
  if (parts.empty()) {
    return "round " + std::to_string(round) + " ended";
  }
  std::string out;
  for (const auto& p : parts) {
    out += (out.empty() ? "" : "; ") + p;
  }
  return out;
}

/// "missing --node_rank 1, 3" for the static backend when every arrival is known, else how
/// many more nodes the round needs.
/// Each line of `text` on a line of its own, indented under the message ("" for none).
std::string indented_lines(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end;
    out += "\n  " + text.substr(start, end - start);
    start = end + 1;
  }
  return out;
}

std::string missing_part(int live, const std::vector<NodeDesc>& arrived,
                         const RdzvSettings& settings) {
  const bool all_known = static_cast<int>(arrived.size()) >= live;
  if (!settings.unique_node_index || !all_known) {
    const int more = std::max(0, settings.min_nodes - live);
    return std::string(settings.unique_node_index ? "missing " : "missing at least ") +
           std::to_string(more) + (more == 1 ? " node" : " nodes");
  }
  const auto missing = missing_node_indices(settings.max_nodes, arrived);
  std::string out = "missing --node_rank ";
  const std::size_t shown = std::min(missing.size(), k_max_named_ids);
  for (std::size_t i = 0; i < shown; ++i) {
    out += (i == 0 ? "" : ", ") + std::to_string(missing[i]);
  }
  if (shown < missing.size()) {
    out += ", ... and " + std::to_string(missing.size() - shown) + " more";
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
  const std::size_t shown = std::min(nodes.size(), k_max_named_ids);
  for (std::size_t i = 0; i < shown; ++i) {
    out += (out.empty() ? "" : ", ") + (by_addr ? nodes[i].addr : nodes[i].id());
  }
  if (shown < nodes.size()) {
    out += ", ... and " + std::to_string(nodes.size() - shown) + " more";
  }
  return out;
}

std::string render_ids(const std::vector<std::string>& ids, int total) {
  std::set<std::string> addrs;
  for (const auto& id : ids) {
    addrs.insert(addr_of(id));
  }
  const bool by_addr = addrs.size() == ids.size();
  std::string out;
  const std::size_t shown = std::min(ids.size(), k_max_named_ids);
  for (std::size_t i = 0; i < shown; ++i) {
    out += (out.empty() ? "" : ", ") + (by_addr ? addr_of(ids[i]) : ids[i]);
  }
  if (static_cast<int>(shown) < total) {
    out += (out.empty() ? "" : ", ... and ") + std::to_string(total - static_cast<int>(shown)) +
           (shown == 0 ? " nodes" : " more");
  }
  return out;
}

std::string render_progress(const RoundHeader& h, int live, const std::vector<NodeDesc>& arrived,
                            WallMs now, WallMs join_deadline, const RdzvSettings& settings) {
  if (h.phase == Phase::complete) {
    return round_name(settings, h.round) + " is running with " + std::to_string(h.members) +
           " nodes; " + std::to_string(h.waiting) + " waiting for the next round, waiting up to " +
           seconds_left(now, join_deadline);
  }
  WallMs until = h.deadline ? std::min(*h.deadline, join_deadline) : join_deadline;
  return round_name(settings, h.round) + ": " + std::to_string(live) + "/" +
         std::to_string(settings.max_nodes) + " nodes (" + names_of(arrived, live) +
         "), waiting up to " + seconds_left(now, until) + " for more";
}

std::vector<int> missing_node_indices(int expected, const std::vector<NodeDesc>& arrived) {
  std::set<int> present;
  for (const auto& n : arrived) {
    if (n.node_index) {
      present.insert(*n.node_index);
    }
  }
  std::vector<int> out;
  for (int i = 0; i < expected; ++i) {
    if (present.count(i) == 0) {
      out.push_back(i);
    }
  }
  return out;
}

std::chrono::milliseconds first_incomplete_warning(const RdzvSettings& settings) {
  return std::min(settings.incomplete_warning_after, settings.join_timeout / 2);
}

bool is_incomplete_warning_due(WallMs join_started, std::optional<WallMs> last_warning, WallMs now,
                               const RdzvSettings& settings) {
  if (last_warning) {
    return now - *last_warning >= settings.incomplete_warning_interval.count();
  }
  return now - join_started >= first_incomplete_warning(settings).count();
}

std::string render_incomplete(const RoundHeader& h, int live, const std::vector<NodeDesc>& arrived,
                              WallMs join_started, WallMs now, WallMs join_deadline,
                              const RdzvSettings& settings, bool with_hint) {
  const WallMs waited = std::max<WallMs>(0, now - join_started) / k_ms_per_second;
  std::string msg = round_name(settings, h.round) + " is incomplete after " +
                    std::to_string(waited) + "s: " + std::to_string(live) + "/" +
                    expected_nodes(settings) + " nodes arrived (" + names_of(arrived, live) +
                    "); " + missing_part(live, arrived, settings) + "; waiting up to " +
                    seconds_left(now, join_deadline) + " more";
  if (with_hint) {
    msg += indented_lines(settings.incomplete_hint);
  }
  return msg;
}

std::string render_store_unanswered(const RdzvSettings& settings, const std::string& endpoint,
                                    WallMs waited, WallMs left, bool with_hint) {
  std::string msg = "rendezvous " + settings.run_id + ": no rendezvous store answers at " +
                    endpoint + " after " + std::to_string(waited / k_ms_per_second) +
                    "s; waiting up to " + seconds_left(0, left) + " more";
  if (with_hint) {
    msg += indented_lines(settings.incomplete_hint);
  }
  return msg;
}

std::string render_timeout(const RoundHeader& h, const RdzvSettings& settings, int live,
                           const std::vector<NodeDesc>& arrived,
                           const std::vector<NodeDesc>& previous) {
  std::string msg = round_name(settings, h.round) + " timed out after " +
                    render_duration(settings.join_timeout) + " (join_timeout): expected " +
                    expected_nodes(settings) + " nodes, " + std::to_string(live) + " arrived (" +
                    names_of(arrived, live) + ")";
  // Only a complete list of arrivals tells who is missing.
  auto lost = static_cast<int>(arrived.size()) >= live ? lost_nodes(arrived, previous)
                                                       : std::vector<NodeDesc>{};
  if (!lost.empty()) {
    msg += "; lost since the previous round: " + render_node_names(lost);
  }
  return msg;
}

std::string render_signal(RunSignal signal, const RoundHeader& h, const NodeDesc& self, int round,
                          const RdzvSettings& settings) {
  const std::string head = round_name(settings, round);
  switch (signal) {
    case RunSignal::none:
      return head + ": no change";
    case RunSignal::closed:
      return head + ": the rendezvous was closed";
    case RunSignal::peer_failed:
      return head + ": node " + (h.failed_round ? h.failed_round->reporter : "?") +
             " reported a failed worker group" +
             (h.failed_round && !h.failed_round->reason.empty()
                  ? " (" + h.failed_round->reason + ")"
                  : std::string()) +
             "; restarting together";
    case RunSignal::store_lost:
      return head + ": the rendezvous store is unreachable";
    case RunSignal::stacks_requested:
      return head + ": another node asks for this node's workers' stacks";
    case RunSignal::membership_changed:
      break;
  }
  const auto& lost = h.ended.lost;
  if (h.ended.round == round && std::find(lost.begin(), lost.end(), self.id()) != lost.end()) {
    return head + ": this node (" + self.addr + ") was dropped from the round: no keep-alive " +
           "of it reached the store for " + render_duration(keep_alive_bound(settings)) +
           " (was the agent stopped or cut off?); it joins the next round";
  }
  return head + ": membership changed (" + membership_changes(h, round) + "); the group re-forms";
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
