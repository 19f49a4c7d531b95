// Pure rendering of a rendezvous state for `ddprun status`.

#include "ddprun/status/render.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace ddprun::status {
namespace {

using json = nlohmann::json;
using Row = std::vector<std::string>;

constexpr double k_ms_per_s = 1000.0;
constexpr const char* k_column_gap = "  ";
constexpr const char* k_indent = "  ";
constexpr const char* k_none = "-";

double age_seconds(rdzv::WallMs then, rdzv::WallMs now) {
  return static_cast<double>(std::max<rdzv::WallMs>(now - then, 0)) / k_ms_per_s;
}

/// Participants in group-rank order (rank, then rank_before for an incomplete round's zeros).
std::vector<const rdzv::Participant*> by_rank(const rdzv::RdzvState& state) {
  std::vector<const rdzv::Participant*> out;
  for (const auto& [id, p] : state.participants) {
    out.push_back(&p);
  }
  std::sort(out.begin(), out.end(), [](const auto* a, const auto* b) {
    if (a->rank != b->rank) {
      return a->rank < b->rank;
    }
    return rdzv::rank_before(a->node, b->node);
  });
  return out;
}

std::vector<const rdzv::NodeDesc*> waiting_in_order(const rdzv::RdzvState& state) {
  std::vector<const rdzv::NodeDesc*> out;
  for (const auto& [id, n] : state.wait_list) {
    out.push_back(&n);
  }
  std::sort(out.begin(), out.end(),
            [](const auto* a, const auto* b) { return rdzv::rank_before(*a, *b); });
  return out;
}

std::string heartbeat_text(const rdzv::RdzvState& state, const std::string& id, rdzv::WallMs now) {
  const auto it = state.last_heartbeats.find(id);
  return it == state.last_heartbeats.end() ? k_none : render_age(it->second, now);
}

Row node_row(const rdzv::RdzvState& state, const rdzv::NodeDesc& n, rdzv::WallMs now) {
  return {n.id(),
          n.addr,
          std::to_string(n.pid),
          std::to_string(n.nproc),
          n.role,
          heartbeat_text(state, n.id(), now)};
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

int total_workers(const rdzv::RdzvState& state) {
  int total = 0;
  for (const auto& [id, p] : state.participants) {
    total += p.node.nproc;
  }
  return total;
}

std::string summary_line(const rdzv::RdzvState& state, rdzv::WallMs now) {
  std::string phase = state.complete ? "complete" : "joining";
  if (!state.complete && state.deadline) {
    phase += fmt::format(" (last call ends in {:.1f}s)", age_seconds(now, *state.deadline));
  }
  const std::string again =
      state.round > 0 ? fmt::format(" ({} re-rendezvous)", state.round) : std::string();
  return fmt::format("round {}{}, {}, {}\n", state.round, again, phase,
                     state.closed ? "closed" : "open");
}

std::string failure_line(const rdzv::RdzvState& state) {
  if (!state.failed_round) {
    return "last failure: none\n";
  }
  return fmt::format("last failure: round {}, reported by {}\n", state.failed_round->round,
                     state.failed_round->reporter);
}

std::string participants_section(const rdzv::RdzvState& state, rdzv::WallMs now) {
  std::string out = fmt::format("participants: {} nodes, {} workers\n", state.participants.size(),
                                total_workers(state));
  if (state.participants.empty()) {
    return out;
  }
  std::vector<Row> rows{{"RANK", "NODE", "ADDR", "PID", "NPROC", "ROLE", "HEARTBEAT"}};
  for (const auto* p : by_rank(state)) {
    Row row = node_row(state, p->node, now);
    row.insert(row.begin(), state.complete ? std::to_string(p->rank) : k_none);
    rows.push_back(std::move(row));
  }
  return out + render_rows(rows);
}

std::string waiting_section(const rdzv::RdzvState& state, rdzv::WallMs now) {
  std::string out = fmt::format("waiting: {} nodes\n", state.wait_list.size());
  if (state.wait_list.empty()) {
    return out;
  }
  std::vector<Row> rows{{"NODE", "ADDR", "PID", "NPROC", "ROLE", "HEARTBEAT"}};
  for (const auto* n : waiting_in_order(state)) {
    rows.push_back(node_row(state, *n, now));
  }
  return out + render_rows(rows);
}

json node_json(const rdzv::RdzvState& state, const rdzv::NodeDesc& n, rdzv::WallMs now) {
  json j = {{"id", n.id()},
            {"addr", n.addr},
            {"pid", n.pid},
            {"local_id", n.local_id},
            {"nproc", n.nproc},
            {"role", n.role},
            {"endpoint_host", n.is_endpoint_host}};
  j["node_index"] = n.node_index ? json(*n.node_index) : json(nullptr);
  const auto beat = state.last_heartbeats.find(n.id());
  const bool has_beat = beat != state.last_heartbeats.end();
  j["last_heartbeat_ms"] = has_beat ? json(beat->second) : json(nullptr);
  j["heartbeat_age_s"] = has_beat ? json(age_seconds(beat->second, now)) : json(nullptr);
  return j;
}

}  // namespace

std::string render_age(rdzv::WallMs then, rdzv::WallMs now) {
  return fmt::format("{:.1f}s ago", age_seconds(then, now));
}

std::string render_status_table(const rdzv::RdzvState& state, rdzv::WallMs now) {
  return summary_line(state, now) + failure_line(state) + participants_section(state, now) +
         waiting_section(state, now);
}

std::string render_status_json(const rdzv::RdzvState& state, rdzv::WallMs now) {
  json participants = json::array();
  for (const auto* p : by_rank(state)) {
    json j = node_json(state, p->node, now);
    j["rank"] = state.complete ? json(p->rank) : json(nullptr);
    participants.push_back(std::move(j));
  }
  json waiting = json::array();
  for (const auto* n : waiting_in_order(state)) {
    waiting.push_back(node_json(state, *n, now));
  }
  json j = {{"round", state.round},
            {"restarts", state.round},
            {"complete", state.complete},
            {"closed", state.closed},
            {"participants", participants},
            {"waiting", waiting},
            {"workers", total_workers(state)},
            {"now_ms", now}};
  j["deadline_ms"] = state.deadline ? json(*state.deadline) : json(nullptr);
  j["failed_round"] = state.failed_round ? json{{"round", state.failed_round->round},
                                                {"reporter", state.failed_round->reporter}}
                                         : json(nullptr);
  return j.dump();
}

}  // namespace ddprun::status
