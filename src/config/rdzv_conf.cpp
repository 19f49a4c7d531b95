// --rdzv-conf: torchrun's split (config::parse_rdzv_conf), then ddprun's reading of each key.
#include "ddprun/config/rdzv_conf.hpp"

#include "ddprun/config/launch_config.hpp"
#include "ddprun/util/strings.hpp"

#include <algorithm>

namespace ddprun::config {

namespace {

using util::quoted;

constexpr ConfKey k_keys[] = {
    {"join_timeout", ConfKeyUse::used, ""},
    {"last_call_timeout", ConfKeyUse::used, ""},
    {"close_timeout", ConfKeyUse::used, ""},
    {"heartbeat_timeout", ConfKeyUse::used, ""},
    {"keep_alive_interval", ConfKeyUse::used, ""},
    {"keep_alive_max_attempt", ConfKeyUse::used, ""},
    {"read_timeout", ConfKeyUse::used, ""},
    {"is_host", ConfKeyUse::c10d_only, "the static backend's store is hosted by node rank 0"},
    {"timeout", ConfKeyUse::static_only, "c10d does not read it, use join_timeout"},
    {"token_file", ConfKeyUse::used, ""},
    {"store_type", ConfKeyUse::used, ""},
    {"rank", ConfKeyUse::ignored, "the node rank is --node-rank"},
    {"use_libuv", ConfKeyUse::ignored, "ddprun's store has a single backend"},
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
                         std::string_view backend) {
  const ConfKey* k = find_key(key);
  if (k == nullptr) {
    return "unknown key (ddprun knows " + known_keys() + ")";
  }
  bool is_static = backend == "static";
  bool applies = k->use == ConfKeyUse::used || (k->use == ConfKeyUse::c10d_only && !is_static) ||
                 (k->use == ConfKeyUse::static_only && is_static);
  if (key == "store_type" && util::to_lower(value) != "tcp") {
    return "ddprun's rendezvous always uses its TCP store";
  }
  if (applies) {
    return "";
  }
  if (k->use == ConfKeyUse::ignored) {
    return std::string(k->why_ignored);
  }
  return "not used by the " + std::string(backend) + " backend: " + std::string(k->why_ignored);
}

}  // namespace

std::span<const ConfKey> rdzv_conf_keys() { return k_keys; }

Result<RdzvConf> read_rdzv_conf(std::string_view text, std::string_view backend) {
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
    auto why = why_left_out(key, value, backend);
    if (why.empty()) {
      out.pairs[key] = value;
    } else {
      out.warnings.push_back(quoted(key + "=" + value) + ": ignored, " + why);
    }
  }
  return out;
}

}  // namespace ddprun::config
