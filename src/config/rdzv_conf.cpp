// --rdzv-conf: torchrun's split (config::parse_rdzv_conf), then ddprun's reading of each key.
#include "ddprun/config/rdzv_conf.hpp"

#include "ddprun/config/backends.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/util/strings.hpp"

#include <algorithm>

namespace ddprun::config {

namespace {

using util::quoted;

constexpr ConfKey k_keys[] = {
    {"join_timeout", k_read_by_c10d | k_read_by_etcd_v3,
     "it waits for the nodes up to --rdzv_conf timeout (default 900 s), as torchrun's does"},
    {"last_call_timeout", k_read_by_all, ""},
    {"close_timeout", k_read_by_all, ""},
    {"heartbeat_timeout", k_read_by_all, ""},
    {"keep_alive_interval", k_read_by_all, ""},
    {"keep_alive_max_attempt", k_read_by_all, ""},
    {"read_timeout", k_read_by_all, ""},
    {"max_node_failures", k_read_by_all, ""},
    {"spare_grace", k_read_by_c10d | k_read_by_etcd_v3, "the static backend has no spares"},
    {"node_domain", k_read_by_c10d | k_read_by_etcd_v3,
     "the static backend's node ranks are --node-rank"},
    {"is_host", k_read_by_c10d, "only c10d hosts its store on an agent"},
    {"timeout", k_read_by_static, "only the static backend reads it, use join_timeout"},
    {"token_file", k_read_by_all, ""},
    {"store_type", k_read_by_static | k_read_by_c10d, "etcd-v3 keeps the rendezvous in etcd"},
    {"protocol", k_read_by_etcd_v3, "only etcd-v3 reads it"},
    {"cacert", k_read_by_etcd_v3, "only etcd-v3 reads it"},
    {"cert", k_read_by_etcd_v3, "only etcd-v3 reads it"},
    {"key", k_read_by_etcd_v3, "only etcd-v3 reads it"},
    {"key_prefix", k_read_by_etcd_v3, "only etcd-v3 reads it"},
    {"end_record_ttl", k_read_by_etcd_v3,
     "only etcd-v3 keeps a record of how a run ended after its keys are gone"},
    {"username", k_read_by_etcd_v3, "only etcd-v3 reads it"},
    {"password_file", k_read_by_etcd_v3, "only etcd-v3 reads it"},
    {"password", 0, "a password is never taken on the command line: use password_file=PATH"},
    {"rank", 0, "the node rank is --node-rank"},
    {"use_libuv", 0, "ddprun's store has a single backend"},
};

/// Removes one pair of matching quotes around the whole text.
std::string_view strip_outer_quotes(std::string_view text) {
  auto t = util::trim(text);
  if (t.size() >= 2 && (t.front() == '\'' || t.front() == '"') && t.back() == t.front()) {
    return t.substr(1, t.size() - 2);
  }
  return t;
}

const ConfKey* find_key(std::string_view key) {
  auto it = std::find_if(std::begin(k_keys), std::end(k_keys),
                         [&](const ConfKey& k) { return k.key == key; });
  return it == std::end(k_keys) ? nullptr : &*it;
}

std::string known_keys() {
  std::string out;
  for (const auto& k : k_keys) {
    out += (out.empty() ? "" : ", ") + std::string(k.key);
  }
  return out;
}

/// Why a pair is left out under `backend`, or "" when ddprun uses it.
std::string why_left_out(const std::string& key, const std::string& value,
                         const BackendRow& backend) {
  const ConfKey* k = find_key(key);
  if (k == nullptr) {
    return "unknown key (ddprun knows " + known_keys() + ")";
  }
  const bool applies = (k->read_by & backend.conf_bit) != 0;
  if (applies && key == "store_type" && util::to_lower(value) != "tcp") {
    return "ddprun's rendezvous always uses its TCP store";
  }
  if (applies) {
    return "";
  }
  if (k->read_by == 0) {
    return std::string(k->why_ignored);
  }
  return "not used by the " + std::string(backend.name) +
         " backend: " + std::string(k->why_ignored);
}

}  // namespace

std::span<const ConfKey> rdzv_conf_keys() { return k_keys; }

Result<RdzvConf> read_rdzv_conf(std::string_view text, std::string_view backend_name) {
  const BackendRow* backend = find_backend(backend_name);
  if (backend == nullptr) {
    return make_error(ErrorCode::usage,
                      quoted(backend_name) + ": expected a backend, " + backend_names());
  }
  RdzvConf out;
  auto inner = strip_outer_quotes(text);
  if (inner.size() != util::trim(text).size()) {
    out.warnings.push_back(quoted(util::trim(text)) +
                           ": removed the quotes around the whole value (a shell quote passed "
                           "on literally; torchrun would read them as part of the first key "
                           "and the last value)");
  }
  auto pairs = parse_rdzv_conf(inner);
  if (!pairs) {
    return pairs.error();
  }
  for (auto& [key, value] : *pairs) {
    auto why = why_left_out(key, value, *backend);
    if (why.empty()) {
      out.pairs[key] = value;
    } else {
      out.warnings.push_back(quoted(key + "=" + value) + ": ignored, " + why);
    }
  }
  return out;
}

}  // namespace ddprun::config
