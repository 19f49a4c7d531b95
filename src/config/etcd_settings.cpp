// --rdzv-backend etcd-v3: the member list and the --rdzv-conf keys that say how to reach it.
#include "ddprun/config/launch_config.hpp"
#include "ddprun/util/strings.hpp"

namespace ddprun::config {

namespace {

/// A week: a record kept longer than any job's requeue would only wait to expire.
constexpr std::int64_t k_max_end_record_ttl = 7 * 24 * 3600;

std::string conf_value(const std::map<std::string, std::string>& conf, const std::string& key) {
  auto it = conf.find(key);
  return it == conf.end() ? std::string() : it->second;
}

/// Both or neither of two keys that only make sense together.
bool paired(const std::map<std::string, std::string>& conf, const std::string& a,
            const std::string& b) {
  return conf_value(conf, a).empty() == conf_value(conf, b).empty();
}

}  // namespace

Result<EtcdSettings> read_etcd_conf(const std::map<std::string, std::string>& conf) {
  const std::string protocol = util::to_lower(conf_value(conf, "protocol"));
  if (!protocol.empty() && protocol != "http" && protocol != "https") {
    return make_error(ErrorCode::usage, "protocol=http or protocol=https");
  }
  for (const auto& [a, b] : {std::pair<std::string, std::string>{"cert", "key"},
                             std::pair<std::string, std::string>{"username", "password_file"}}) {
    if (!paired(conf, a, b)) {
      return make_error(ErrorCode::usage, a + " and " + b + " together (give both or neither)");
    }
  }
  EtcdSettings s;
  s.tls = protocol == "https";
  s.ca_file = conf_value(conf, "cacert");
  s.cert_file = conf_value(conf, "cert");
  s.key_file = conf_value(conf, "key");
  s.username = conf_value(conf, "username");
  s.password_file = conf_value(conf, "password_file");
  if (const auto ttl = conf_value(conf, "end_record_ttl"); !ttl.empty()) {
    const auto n = util::parse_int_in(ttl, 1, k_max_end_record_ttl);
    if (!n) {
      return make_error(ErrorCode::usage, "end_record_ttl=SECONDS, a whole number from 1 to " +
                                              std::to_string(k_max_end_record_ttl));
    }
    s.end_record_ttl = std::chrono::seconds(*n);
  }
  if (conf.count("key_prefix") != 0) {
    s.key_prefix = conf_value(conf, "key_prefix");
    while (!s.key_prefix.empty() && s.key_prefix.back() == '/') {
      s.key_prefix.pop_back();
    }
    if (s.key_prefix.empty()) {
      return make_error(ErrorCode::usage, "a key_prefix other than '/', such as /ddprun/rdzv");
    }
  }
  return s;
}

Result<std::vector<etcd::Endpoint>> parse_etcd_members(std::string_view text, bool tls) {
  const std::string form = "etcd members [http://|https://]HOST[:PORT],... (port 2379 by default)";
  if (util::trim(text).empty()) {
    return make_error(ErrorCode::usage, util::quoted(text) + ": expected the " + form +
                                            " for etcd-v3, e.g. etcd1,etcd2,etcd3");
  }
  auto members = etcd::parse_endpoints(text, tls);
  if (!members) {
    return make_error(ErrorCode::usage,
                      util::quoted(text) + ": expected " + form + ": " + members.error().message);
  }
  return members;
}

}  // namespace ddprun::config
