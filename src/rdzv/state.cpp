#include "ddprun/rdzv/state.hpp"

#include <nlohmann/json.hpp>

#include <tuple>

namespace ddprun::rdzv {
namespace {

using nlohmann::json;

constexpr int k_state_version = 1;
constexpr std::string_view k_key_prefix = "ddprun/rdzv/";

json node_to_json(const NodeDesc& n) {
  json j = {{"addr", n.addr},   {"pid", n.pid},   {"local_id", n.local_id},
            {"nproc", n.nproc}, {"role", n.role}, {"endpoint_host", n.is_endpoint_host}};
  j["node_index"] = n.node_index ? json(*n.node_index) : json(nullptr);
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
  return n;
}

json participants_to_json(const std::map<std::string, Participant>& ps) {
  json j = json::object();
  for (const auto& [id, p] : ps) {
    j[id] = {{"node", node_to_json(p.node)}, {"rank", p.rank}};
  }
  return j;
}

json wait_list_to_json(const std::map<std::string, NodeDesc>& ws) {
  json j = json::object();
  for (const auto& [id, n] : ws) {
    j[id] = node_to_json(n);
  }
  return j;
}

RdzvState state_from_json(const json& j) {
  RdzvState s;
  if (j.at("version").get<int>() != k_state_version) {
    throw std::invalid_argument("unsupported version " + j.at("version").dump());
  }
  s.round = j.at("round").get<int>();
  s.complete = j.at("complete").get<bool>();
  s.closed = j.at("closed").get<bool>();
  if (!j.at("deadline").is_null()) {
    s.deadline = j.at("deadline").get<WallMs>();
  }
  for (const auto& [id, p] : j.at("participants").items()) {
    s.participants[id] = Participant{node_from_json(p.at("node")), p.at("rank").get<int>()};
  }
  for (const auto& [id, n] : j.at("wait_list").items()) {
    s.wait_list[id] = node_from_json(n);
  }
  s.last_heartbeats = j.at("last_heartbeats").get<std::map<std::string, WallMs>>();
  const auto& f = j.at("failed_round");
  if (!f.is_null()) {
    s.failed_round = FailedRound{f.at("round").get<int>(), f.at("reporter").get<std::string>()};
  }
  if (j.contains("left")) {  // absent in states written before the leave op existed
    s.left = j.at("left").get<std::set<std::string>>();
  }
  return s;
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

std::string state_key(const std::string& run_id) {
  return std::string(k_key_prefix) + run_id + "/state";
}

std::string host_marker_key(const std::string& run_id) {
  return std::string(k_key_prefix) + run_id + "/host";
}

std::string round_prefix(const std::string& run_id, int round) {
  return std::string(k_key_prefix) + run_id + "/" + std::to_string(round) + "/";
}

std::string encode_state(const RdzvState& s) {
  json j = {{"version", k_state_version},
            {"round", s.round},
            {"complete", s.complete},
            {"closed", s.closed},
            {"participants", participants_to_json(s.participants)},
            {"wait_list", wait_list_to_json(s.wait_list)},
            {"last_heartbeats", s.last_heartbeats},
            {"left", s.left}};
  j["deadline"] = s.deadline ? json(*s.deadline) : json(nullptr);
  j["failed_round"] = s.failed_round ? json{{"round", s.failed_round->round},
                                            {"reporter", s.failed_round->reporter}}
                                     : json(nullptr);
  return j.dump();
}

Result<RdzvState> decode_state(std::string_view text) {
  try {
    return state_from_json(json::parse(text));
  } catch (const std::exception& e) {
    return make_error(ErrorCode::protocol, "rendezvous state of " + std::to_string(text.size()) +
                                               " bytes is not a ddprun state: " + e.what());
  }
}

}  // namespace ddprun::rdzv
