// Pure rendering of a rendezvous reading for `ddprun status`.

#include "ddprun/status/render.hpp"

#include "ddprun/rdzv/rank_order.hpp"
#include "ddprun/rdzv/state_json.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <optional>

namespace ddprun::status {
namespace {

using json = nlohmann::json;
using Row = std::vector<std::string>;

constexpr double k_ms_per_s = 1000.0;
constexpr const char* k_column_gap = "  ";
constexpr const char* k_indent = "  ";
constexpr const char* k_none = "-";
constexpr rdzv::WallMs k_ms_per_second = 1000;
constexpr rdzv::WallMs k_seconds_per_minute = 60;
constexpr rdzv::WallMs k_seconds_per_hour = 3600;

double age_seconds(rdzv::WallMs then, rdzv::WallMs now) {
  return static_cast<double>(std::max<rdzv::WallMs>(now - then, 0)) / k_ms_per_s;
}

bool is_complete(const Snapshot& s) { return s.header.phase == rdzv::Phase::complete; }

std::string heartbeat_text(const Snapshot& s, const std::string& id, rdzv::WallMs now) {
  const auto it = s.heartbeats.find(id);
  return it == s.heartbeats.end() ? k_none : render_age(it->second, now);
}

std::string progress_text(const Snapshot& s, const std::string& id, rdzv::WallMs now) {
  const auto it = s.progress.find(id);
  return it == s.progress.end() ? k_none : render_elapsed(it->second, now);
}

std::optional<double> stall_seconds(const Snapshot& s, const std::string& id) {
  const auto it = s.stall_timeouts.find(id);
  if (it == s.stall_timeouts.end()) {
    return std::nullopt;
  }
  return static_cast<double>(it->second.count()) / k_ms_per_s;
}

std::string stall_text(const Snapshot& s, const std::string& id) {
  const auto seconds = stall_seconds(s, id);
  return seconds ? fmt::format("{:.0f}s", *seconds) : k_none;
}

/// `key_ms` (the time) and `key_age` (seconds before `now`) of `id` in `times`, null if absent.
void put_time(json& j, const std::map<std::string, rdzv::WallMs>& times, const std::string& id,
              rdzv::WallMs now, const char* key_ms, const char* key_age) {
  const auto it = times.find(id);
  const bool known = it != times.end();
  j[key_ms] = known ? json(it->second) : json(nullptr);
  j[key_age] = known ? json(age_seconds(it->second, now)) : json(nullptr);
}

/// Left-aligned columns separated by two spaces, trailing blanks trimmed.
std::string render_rows(const std::vector<Row>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (std::size_t i = 0; i < row.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = k_indent;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += fmt::format("{:<{}}", row[i], width[i]) + (i + 1 < row.size() ? k_column_gap : "");
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

int total_workers(const Snapshot& s) {
  int total = 0;
  for (const auto& n : s.nodes) {
    total += n.nproc;
  }
  return total;
}

std::string summary_line(const Snapshot& s, rdzv::WallMs now) {
  const auto& h = s.header;
  std::string phase = rdzv::to_string(h.phase);
  if (h.phase == rdzv::Phase::joining && h.deadline) {
    phase += fmt::format(" (last call ends in {:.1f}s)", age_seconds(now, *h.deadline));
  }
  const std::string again = h.round > 0 ? fmt::format(" ({} re-rendezvous)", h.round) : "";
  return fmt::format("round {}{}, {}, {}\n", h.round, again, phase, h.closed ? "closed" : "open");
}

std::string ids_text(const std::vector<std::string>& ids) {
  std::string out;
  for (const auto& id : ids) {
    out += (out.empty() ? "" : ", ") + id;
  }
  return out;
}

std::string history_lines(const Snapshot& s) {
  const auto& h = s.header;
  std::string out = "last failure: none\n";
  if (const auto& f = h.failed_round) {
    out = fmt::format("last failure: round {}, root cause {}{}\n", f->round, f->reporter,
                      f->reason.empty() ? "" : ": " + f->reason);
  }
  for (const auto& e : h.excluded) {
    if (e.failures == 0) {  // it failed its health checks
      out +=
          fmt::format("excluded: {}, unhealthy before round {}: {}\n", e.node, e.round, e.reason);
      continue;
    }
    out += fmt::format("excluded: {} after {} failed rounds in a row (last in round {}: {})\n",
                       e.node, e.failures, e.round, e.reason);
  }
  if (!h.ended.left.empty() || !h.ended.lost.empty()) {
    out += fmt::format("round {} ended:", h.ended.round);
    out += h.ended.left.empty() ? "" : " left " + ids_text(h.ended.left) + ";";
    out += h.ended.lost.empty() ? "" : " lost " + ids_text(h.ended.lost) + ";";
    out.back() = '\n';
  }
  if (!h.error.empty()) {
    out += "error: " + h.error + "\n";
  }
  return out;
}

/// The segment of the node at group rank `i` of a complete round with --segment.
std::optional<std::size_t> segment_of(const Snapshot& s, std::size_t i) {
  if (!is_complete(s) || s.header.segment <= 0) {
    return std::nullopt;
  }
  return i / static_cast<std::size_t>(s.header.segment);
}

/// Whether the table shows domains and segments: a node has a domain, or the run segments.
bool has_domains(const Snapshot& s) {
  return s.header.segment > 0 || std::any_of(s.nodes.begin(), s.nodes.end(),
                                             [](const auto& n) { return !n.domain.empty(); });
}

std::string participants_section(const Snapshot& s, rdzv::WallMs now) {
  std::string out =
      fmt::format("participants: {} nodes, {} workers\n", s.nodes.size(), total_workers(s));
  if (s.nodes.empty()) {
    return out;
  }
  const bool learned = !s.stall_timeouts.empty();
  const bool placed = has_domains(s);
  std::vector<Row> rows{
      {"RANK", "NODE", "ADDR", "PID", "NPROC", "ROLE", "HEARTBEAT", "LAST PROGRESS"}};
  if (placed) {
    rows.back().insert(rows.back().end(), {"DOMAIN", "SEGMENT"});
  }
  if (learned) {
    rows.back().emplace_back("STALL TIMEOUT");
  }
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    const auto& n = s.nodes[i];
    rows.push_back({is_complete(s) ? std::to_string(i) : k_none, n.id(), n.addr,
                    std::to_string(n.pid), std::to_string(n.nproc), n.role,
                    heartbeat_text(s, n.id(), now), progress_text(s, n.id(), now)});
    if (placed) {
      const auto seg = segment_of(s, i);
      rows.back().insert(rows.back().end(),
                         {rdzv::domain_text(n), seg ? std::to_string(*seg) : k_none});
    }
    if (learned) {
      rows.back().push_back(stall_text(s, n.id()));
    }
  }
  return out + render_rows(rows);
}

std::string waiting_section(const Snapshot& s) {
  const auto& h = s.header;
  std::string out = fmt::format("waiting (spares, late joiners): {} nodes\n", h.waiting);
  for (const auto& id : h.waiting_ids) {
    out += k_indent + id + "\n";
  }
  if (h.waiting > static_cast<int>(h.waiting_ids.size())) {
    out += fmt::format("{}... and {} more\n", k_indent,
                       h.waiting - static_cast<int>(h.waiting_ids.size()));
  }
  return out;
}

json node_json(const Snapshot& s, const rdzv::NodeDesc& n, rdzv::WallMs now) {
  json j = {{"id", n.id()},
            {"addr", n.addr},
            {"pid", n.pid},
            {"local_id", n.local_id},
            {"nproc", n.nproc},
            {"role", n.role},
            {"endpoint_host", n.is_endpoint_host}};
  j["node_index"] = n.node_index ? json(*n.node_index) : json(nullptr);
  put_time(j, s.heartbeats, n.id(), now, "last_heartbeat_ms", "heartbeat_age_s");
  put_time(j, s.progress, n.id(), now, "last_progress_ms", "progress_age_s");
  const auto stall = stall_seconds(s, n.id());
  j["stall_timeout_s"] = stall ? json(*stall) : json(nullptr);
  return j;
}

}  // namespace

std::string render_age(rdzv::WallMs then, rdzv::WallMs now) {
  return fmt::format("{:.1f}s ago", age_seconds(then, now));
}

std::string render_elapsed(rdzv::WallMs then, rdzv::WallMs now) {
  const rdzv::WallMs s = std::max<rdzv::WallMs>(now - then, 0) / k_ms_per_second;
  if (s < k_seconds_per_minute) {
    return fmt::format("{}s ago", s);
  }
  if (s < k_seconds_per_hour) {
    return fmt::format("{}m{:02}s ago", s / k_seconds_per_minute, s % k_seconds_per_minute);
  }
  return fmt::format("{}h{:02}m ago", s / k_seconds_per_hour,
                     s % k_seconds_per_hour / k_seconds_per_minute);
}

std::string render_status_table(const Snapshot& snap, rdzv::WallMs now) {
  return summary_line(snap, now) + history_lines(snap) + participants_section(snap, now) +
         waiting_section(snap);
}

std::string render_status_json(const Snapshot& snap, rdzv::WallMs now) {
  const auto& h = snap.header;
  json participants = json::array();
  for (std::size_t i = 0; i < snap.nodes.size(); ++i) {
    json j = node_json(snap, snap.nodes[i], now);
    j["rank"] = is_complete(snap) ? json(i) : json(nullptr);
    const auto seg = segment_of(snap, i);
    j["domain"] = snap.nodes[i].domain.empty() ? json(nullptr) : json(snap.nodes[i].domain);
    j["segment"] = seg ? json(*seg) : json(nullptr);
    participants.push_back(std::move(j));
  }
  json j = {{"round", h.round},
            {"restarts", h.round},
            {"phase", rdzv::to_string(h.phase)},
            {"complete", is_complete(snap)},
            {"closed", h.closed},
            {"participants", participants},
            {"waiting", h.waiting},
            {"waiting_ids", h.waiting_ids},
            {"segment_size", h.segment > 0 ? json(h.segment) : json(nullptr)},
            {"standby", h.standby},
            {"ended", h.ended},
            {"error", h.error},
            {"workers", total_workers(snap)},
            {"now_ms", now}};
  j["deadline_ms"] = h.deadline ? json(*h.deadline) : json(nullptr);
  j["failed_round"] = h.failed_round ? json{{"round", h.failed_round->round},
                                            {"reporter", h.failed_round->reporter},
                                            {"reason", h.failed_round->reason}}
                                     : json(nullptr);
  j["excluded"] = h.excluded;
  return j.dump();
}

}  // namespace ddprun::status
