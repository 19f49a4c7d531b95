#include "ddprun/rdzv/state.hpp"

#include "ddprun/rdzv/state_json.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <tuple>

namespace ddprun::rdzv {
namespace {

using nlohmann::json;

/// The layout of the run's keys as a whole, not only the header's fields: 6 is the first with
/// etcd-v3 counters kept as keys (etcd_kv.hpp), 7 with the members list in parts (members.hpp),
/// 8 with domains and segments (rank_order.hpp). Agents of two layouts must not share a run.
constexpr int k_state_version = 8;
constexpr std::string_view k_key_prefix = "ddprun/rdzv/";

json node_to_json(const NodeDesc& n) {
  json j = {{"addr", n.addr},   {"pid", n.pid},   {"local_id", n.local_id},
            {"nproc", n.nproc}, {"role", n.role}, {"endpoint_host", n.is_endpoint_host}};
  j["node_index"] = n.node_index ? json(*n.node_index) : json(nullptr);
  // Only what is known: a members list of thousands of nodes stays within a request.
  if (!n.topology.empty()) {
    j["topology"] = n.topology;
  }
  if (!n.domain.empty()) {
    j["domain"] = n.domain;
  }
  if (n.last_round >= 0) {
    j["last_round"] = n.last_round;
    j["last_rank"] = n.last_rank;
  }
  return j;
}

NodeDesc node_from_json(const json& j) {
  NodeDesc n;
  n.addr = j.at("addr").get<std::string>();
  n.pid = j.at("pid").get<std::int64_t>();
  n.local_id = j.at("local_id").get<int>();
  n.nproc = j.at("nproc").get<int>();
  n.role = j.at("role").get<std::string>();
  n.is_endpoint_host = j.at("endpoint_host").get<bool>();
  if (!j.at("node_index").is_null()) {
    n.node_index = j.at("node_index").get<int>();
  }
  n.topology = j.value("topology", std::string());
  n.domain = j.value("domain", std::string());
  n.last_round = j.value("last_round", -1);
  n.last_rank = j.value("last_rank", -1);
  return n;
}

Phase phase_from(const std::string& s) {
  for (Phase p : {Phase::joining, Phase::closing, Phase::complete}) {
    if (to_string(p) == s) {
      return p;
    }
  }
  throw std::invalid_argument("unknown phase '" + s + "'");
}

CrashStreak streak_from_json(const json& j) {
  return CrashStreak{j.at("signature").get<std::string>(), j.at("count").get<int>(),
                     j.value("hinted_stop_at", WallMs{0})};
}

json streak_to_json(const CrashStreak& s) {
  return json{{"signature", s.signature}, {"count", s.count}, {"hinted_stop_at", s.hinted_stop_at}};
}

RoundHeader header_from_json(const json& j) {
  if (const auto& v = j.at("version"); v != k_state_version) {
    throw std::invalid_argument("it has state version " + v.dump() + ", this ddprun reads " +
                                std::to_string(k_state_version) +
                                ": another ddprun release wrote it, and every node of a run "
                                "must run the same release");
  }
  RoundHeader h;
  h.round = j.at("round").get<int>();
  h.phase = phase_from(j.at("phase").get<std::string>());
  if (!j.at("deadline").is_null()) {
    h.deadline = j.at("deadline").get<WallMs>();
  }
  h.checked = j.at("checked").get<int>();
  h.size = j.at("size").get<int>();
  h.closer = j.at("closer").get<std::string>();
  h.closing_since = j.at("closing_since").get<WallMs>();
  h.members = j.at("members").get<int>();
  h.workers = j.at("workers").get<int>();
  h.error = j.at("error").get<std::string>();
  h.closed = j.at("closed").get<bool>();
  h.closed_at = j.value("closed_at", WallMs{0});
  h.finished = j.value("finished", false);
  if (const auto& f = j.at("failed_round"); !f.is_null()) {
    h.failed_round = FailedRound{f.at("round").get<int>(),
                                 f.at("reporter").get<std::string>(),
                                 f.at("at").get<WallMs>(),
                                 f.at("reason").get<std::string>(),
                                 f.at("signature").get<std::string>(),
                                 f.at("quick").get<bool>(),
                                 f.at("spares").get<int>()};
  }
  h.failures = j.at("failures").get<int>();
  h.streak = streak_from_json(j.at("streak"));
  h.streak_before = streak_from_json(j.at("streak_before"));
  h.stop_reason = j.at("stop_reason").get<std::string>();
  h.causes = j.at("causes").get<std::vector<std::string>>();
  for (const auto& x : j.at("excluded")) {
    h.excluded.push_back(Exclusion{x.at("node").get<std::string>(), x.at("round").get<int>(),
                                   x.at("failures").get<int>(), x.at("reason").get<std::string>()});
  }
  h.waiting = j.at("waiting").get<int>();
  h.waiting_ids = j.at("waiting_ids").get<std::vector<std::string>>();
  const auto& e = j.at("ended");
  h.ended = RoundEnd{e.at("round").get<int>(), e.at("left").get<std::vector<std::string>>(),
                     e.at("lost").get<std::vector<std::string>>()};
  h.segment = j.at("segment").get<int>();
  h.standby = j.at("standby").get<int>();
  return h;
}

template <typename T, typename F>
Result<T> parse_as(std::string_view text, const char* what, F from_json) {
  try {
    return from_json(json::parse(text));
  } catch (const std::exception& e) {
    return make_error(ErrorCode::protocol, std::string("rendezvous ") + what + " of " +
                                               std::to_string(text.size()) +
                                               " bytes is not valid: " + e.what());
  }
}

}  // namespace

std::string NodeDesc::id() const {
  return addr + "_" + std::to_string(pid) + "_" + std::to_string(local_id);
}

bool rank_before(const NodeDesc& a, const NodeDesc& b) {
  // Nodes without a scheduler index sort after those with one (the bool is "has none").
  auto key = [](const NodeDesc& n) {
    return std::make_tuple(!n.is_endpoint_host, !n.node_index.has_value(), n.node_index.value_or(0),
                           n.addr, n.pid, n.local_id);
  };
  return key(a) < key(b);
}

std::string to_string(Phase p) {
  switch (p) {
    case Phase::joining:
      return "joining";
    case Phase::closing:
      return "closing";
    case Phase::complete:
      return "complete";
  }
  return "unknown";
}

std::optional<WallMs> parse_heartbeat(const std::string& text) {
  WallMs v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end) {
    return std::nullopt;
  }
  return v;
}

std::string render_progress_value(std::optional<WallMs> last_progress) {
  return last_progress ? std::to_string(*last_progress) : k_progress_unknown;
}

std::optional<WallMs> parse_progress_value(const std::string& text) {
  return parse_heartbeat(text);
}

std::string state_key(const std::string& run_id) {
  return std::string(k_key_prefix) + run_id + "/state";
}

std::string host_marker_key(const std::string& run_id) {
  return std::string(k_key_prefix) + run_id + "/host";
}

std::string round_prefix(const std::string& run_id, int round) {
  return std::string(k_key_prefix) + run_id + "/" + std::to_string(round) + "/";
}

std::string slots_key(const std::string& run_id, int round) {
  return round_prefix(run_id, round) + "slots";
}

std::string slot_key(const std::string& run_id, int round, int slot) {
  return round_prefix(run_id, round) + "slot/" + std::to_string(slot);
}

std::vector<std::string> slot_keys(const std::string& run_id, int round, int count) {
  std::vector<std::string> keys;
  keys.reserve(static_cast<std::size_t>(std::max(count, 0)));
  for (int s = 1; s <= count; ++s) {
    keys.push_back(slot_key(run_id, round, s));
  }
  return keys;
}

std::string gone_key(const std::string& run_id, int round) {
  return round_prefix(run_id, round) + "gone";
}

std::string rank_key(const std::string& run_id, int round, int slot) {
  return round_prefix(run_id, round) + "rank/" + std::to_string(slot);
}

std::string heartbeat_key(const std::string& run_id, const std::string& node_id) {
  return std::string(k_key_prefix) + run_id + "/hb/" + node_id;
}

std::string progress_key(const std::string& run_id, const std::string& node_id) {
  return std::string(k_key_prefix) + run_id + "/progress/" + node_id;
}

std::string stacks_request_key(const std::string& run_id, int round) {
  return round_prefix(run_id, round) + "stacks";
}

std::string stacks_answer_key(const std::string& run_id, int round, int seq, int group_rank) {
  return round_prefix(run_id, round) + "stacks/" + std::to_string(seq) + "/" +
         std::to_string(group_rank);
}

std::string encode_header(const RoundHeader& h) {
  json j = {{"version", k_state_version},
            {"round", h.round},
            {"phase", to_string(h.phase)},
            {"checked", h.checked},
            {"size", h.size},
            {"closer", h.closer},
            {"closing_since", h.closing_since},
            {"members", h.members},
            {"workers", h.workers},
            {"error", h.error},
            {"closed", h.closed},
            {"closed_at", h.closed_at},
            {"finished", h.finished},
            {"waiting", h.waiting},
            {"waiting_ids", h.waiting_ids},
            {"ended", h.ended},
            {"segment", h.segment},
            {"standby", h.standby}};
  j["deadline"] = h.deadline ? json(*h.deadline) : json(nullptr);
  j["failed_round"] = h.failed_round ? json{{"round", h.failed_round->round},
                                            {"reporter", h.failed_round->reporter},
                                            {"at", h.failed_round->at},
                                            {"reason", h.failed_round->reason},
                                            {"signature", h.failed_round->signature},
                                            {"quick", h.failed_round->quick},
                                            {"spares", h.failed_round->spares}}
                                     : json(nullptr);
  j["causes"] = h.causes;
  j["failures"] = h.failures;
  j["streak"] = streak_to_json(h.streak);
  j["streak_before"] = streak_to_json(h.streak_before);
  j["stop_reason"] = h.stop_reason;
  j["excluded"] = h.excluded;
  return j.dump();
}

void to_json(json& j, const Exclusion& x) {
  j = json{{"node", x.node}, {"round", x.round}, {"failures", x.failures}, {"reason", x.reason}};
}

void to_json(json& j, const RoundEnd& e) {
  j = json{{"round", e.round}, {"left", e.left}, {"lost", e.lost}};
}

Result<RoundHeader> decode_header(std::string_view text) {
  return parse_as<RoundHeader>(text, "state", header_from_json);
}

std::string encode_node(const NodeDesc& node) { return node_to_json(node).dump(); }

Result<NodeDesc> decode_node(std::string_view text) {
  return parse_as<NodeDesc>(text, "node", node_from_json);
}

std::string encode_withdrawn(const NodeDesc& node) { return "-" + encode_node(node); }

bool is_withdrawn(std::string_view slot_text) {
  return !slot_text.empty() && slot_text.front() == '-';
}

Result<NodeDesc> decode_slot(std::string_view slot_text) {
  if (slot_text.empty()) {
    return make_error(ErrorCode::protocol, "rendezvous slot is empty");
  }
  return decode_node(is_withdrawn(slot_text) ? slot_text.substr(1) : slot_text);
}

std::string encode_assignment(const Assignment& a) {
  json j = {{"member", a.member},           {"why", a.why},
            {"group_rank", a.group_rank},   {"group_world_size", a.group_world_size},
            {"worker_base", a.worker_base}, {"world_size", a.world_size},
            {"role_base", a.role_base},     {"role_world_size", a.role_world_size},
            {"watch", a.watch_id},          {"error", a.error}};
  return j.dump();
}

Result<Assignment> decode_assignment(std::string_view text) {
  return parse_as<Assignment>(text, "assignment", [](const json& j) {
    return Assignment{j.at("member").get<bool>(),       j.at("why").get<std::string>(),
                      j.at("group_rank").get<int>(),    j.at("group_world_size").get<int>(),
                      j.at("worker_base").get<int>(),   j.at("world_size").get<int>(),
                      j.at("role_base").get<int>(),     j.at("role_world_size").get<int>(),
                      j.at("watch").get<std::string>(), j.at("error").get<std::string>()};
  });
}

std::string encode_members(const std::vector<NodeDesc>& members) {
  json j = json::array();
  for (const auto& n : members) {
    j.push_back(node_to_json(n));
  }
  return j.dump();
}

Result<std::vector<NodeDesc>> decode_members(std::string_view text) {
  return parse_as<std::vector<NodeDesc>>(text, "members list", [](const json& j) {
    std::vector<NodeDesc> out;
    for (const auto& n : j) {
      out.push_back(node_from_json(n));
    }
    return out;
  });
}

}  // namespace ddprun::rdzv
