// The death notice's JSON and the header change it asks for (death_notice.hpp).

#include "ddprun/rdzv/death_notice.hpp"

#include "ddprun/rdzv/decide.hpp"

#include <nlohmann/json.hpp>

namespace ddprun::rdzv {

namespace {

using nlohmann::json;

constexpr int k_notice_version = 1;

const char* backend_name(DeathNotice::Backend b) {
  return b == DeathNotice::Backend::etcd_v3 ? "etcd-v3" : "store";
}

json etcd_part(const DeathNotice& n) {
  return json{
      {"members", n.members},       {"ca_file", n.ca_file},       {"cert_file", n.cert_file},
      {"key_file", n.key_file},     {"username", n.username},     {"password", n.password},
      {"key_prefix", n.key_prefix}, {"generation", n.generation}, {"lease", n.lease}};
}

void read_etcd_part(const json& j, DeathNotice& n) {
  n.members = j.at("members").get<std::string>();
  n.ca_file = j.at("ca_file").get<std::string>();
  n.cert_file = j.at("cert_file").get<std::string>();
  n.key_file = j.at("key_file").get<std::string>();
  n.username = j.at("username").get<std::string>();
  n.password = j.at("password").get<std::string>();
  n.key_prefix = j.at("key_prefix").get<std::string>();
  n.generation = j.at("generation").get<std::int64_t>();
  n.lease = j.at("lease").get<std::int64_t>();
}

DeathNotice read_notice(const json& j) {
  if (j.at("v").get<int>() != k_notice_version) {
    throw std::invalid_argument("unknown version");
  }
  DeathNotice n;
  const auto backend = j.at("backend").get<std::string>();
  if (backend != "store" && backend != "etcd-v3") {
    throw std::invalid_argument("unknown backend " + backend);
  }
  n.backend = backend == "store" ? DeathNotice::Backend::store : DeathNotice::Backend::etcd_v3;
  n.run_id = j.at("run_id").get<std::string>();
  n.node_id = j.at("node_id").get<std::string>();
  if (!j.at("round").is_null()) {
    n.round = j.at("round").get<int>();
  }
  if (!j.at("token").is_null()) {
    n.token = j.at("token").get<std::string>();
  }
  if (n.backend == DeathNotice::Backend::store) {
    n.host = j.at("host").get<std::string>();
    n.port = j.at("port").get<int>();
  } else {
    read_etcd_part(j.at("etcd"), n);
  }
  return n;
}

}  // namespace

std::string encode_notice(const DeathNotice& n) {
  json j{{"v", k_notice_version},
         {"backend", backend_name(n.backend)},
         {"run_id", n.run_id},
         {"node_id", n.node_id},
         {"round", n.round ? json(*n.round) : json(nullptr)},
         {"token", n.token ? json(*n.token) : json(nullptr)}};
  if (n.backend == DeathNotice::Backend::store) {
    j["host"] = n.host;
    j["port"] = n.port;
  } else {
    j["etcd"] = etcd_part(n);
  }
  return j.dump();
}

Result<DeathNotice> decode_notice(std::string_view text) {
  try {
    return read_notice(json::parse(text));
  } catch (const std::exception& e) {
    return make_error(ErrorCode::protocol, std::string("bad death notice: ") + e.what());
  }
}

std::optional<RoundHeader> with_node_dead(const RoundHeader& h, const DeathNotice& notice) {
  if (!notice.round) {
    return std::nullopt;
  }
  return with_next_round(h, *notice.round, Phase::complete, {}, {notice.node_id});
}

std::string describe_rendezvous(const DeathNotice& n) {
  if (n.backend == DeathNotice::Backend::etcd_v3) {
    return "rendezvous '" + n.run_id + "' in etcd " + n.members;
  }
  return "rendezvous '" + n.run_id + "' at " + n.host + ":" + std::to_string(n.port);
}

}  // namespace ddprun::rdzv
