#include "ddprun/rdzv/settings.hpp"

#include "ddprun/rdzv/state.hpp"
#include "ddprun/util/strings.hpp"

#include <limits>

namespace ddprun::rdzv {
namespace {

constexpr std::int64_t k_max_conf_int = std::numeric_limits<int>::max();
/// The header remembers the root causes of this many failed rounds (RoundHeader::causes).
constexpr std::int64_t k_max_failure_streak = static_cast<std::int64_t>(k_max_named_ids);

/// A timeout key and its wording in torch's "The join timeout (-1) must be positive.".
struct DurationKey {
  const char* key;
  const char* words;
  std::chrono::milliseconds RdzvSettings::*field;
};

constexpr DurationKey k_duration_keys[] = {
    {"join_timeout", "join timeout", &RdzvSettings::join_timeout},
    {"last_call_timeout", "last call timeout", &RdzvSettings::last_call_timeout},
    {"close_timeout", "close timeout", &RdzvSettings::close_timeout},
    {"heartbeat_timeout", "heartbeat timeout", &RdzvSettings::heartbeat_timeout},
    {"keep_alive_interval", "keep-alive interval", &RdzvSettings::keep_alive_interval},
    {"read_timeout", "read timeout", &RdzvSettings::read_timeout},
    {"spare_grace", "spare grace", &RdzvSettings::spare_grace},
};

Result<std::int64_t> parse_positive(const std::string& key, const std::string& words,
                                    const std::string& text) {
  auto n = util::parse_int(text);
  if (!n) {
    return make_error(ErrorCode::config, "rdzv_conf " + util::quoted(key + "=" + text) +
                                             ": expected a whole number of seconds");
  }
  if (*n <= 0) {
    return make_error(ErrorCode::config,
                      "The " + words + " (" + std::to_string(*n) + ") must be positive.");
  }
  if (*n > k_max_conf_int) {
    return make_error(ErrorCode::config, "rdzv_conf " + util::quoted(key + "=" + text) +
                                             ": expected at most " +
                                             std::to_string(k_max_conf_int) + " seconds");
  }
  return *n;
}

Result<void> apply_key(RdzvSettings& s, const std::string& key, const std::string& value) {
  for (const auto& d : k_duration_keys) {
    if (key == d.key) {
      auto n = parse_positive(key, d.words, value);
      if (!n) {
        return n.error();
      }
      s.*d.field = std::chrono::seconds(*n);
      return {};
    }
  }
  if (key == "keep_alive_max_attempt") {
    auto n = parse_positive(key, "keep-alive max attempt", value);
    if (!n) {
      return n.error();
    }
    s.keep_alive_max_attempt = static_cast<int>(*n);
    return {};
  }
  if (key == "max_node_failures") {
    auto n = util::parse_int(value);
    if (!n || *n < 0 || *n > k_max_failure_streak) {
      return make_error(ErrorCode::config,
                        "rdzv_conf " + util::quoted(key + "=" + value) +
                            ": expected a whole number of failed rounds from 0 (never leave a "
                            "node out) to " +
                            std::to_string(k_max_failure_streak));
    }
    s.max_node_failures = static_cast<int>(*n);
    return {};
  }
  return {};  // another module's key (config::read_rdzv_conf has warned about unknown ones)
}

}  // namespace

Result<RdzvSettings> parse_rdzv_settings(const std::map<std::string, std::string>& conf,
                                         const std::string& run_id, int min_nodes, int max_nodes) {
  if (min_nodes < 1 || max_nodes < min_nodes) {
    return make_error(ErrorCode::config, "nnodes " + std::to_string(min_nodes) + ":" +
                                             std::to_string(max_nodes) +
                                             ": expected 1 <= MIN <= MAX");
  }
  RdzvSettings s;
  s.run_id = run_id;
  s.min_nodes = min_nodes;
  s.max_nodes = max_nodes;
  for (const auto& [key, value] : conf) {
    auto r = apply_key(s, key, value);
    if (!r) {
      return r.error();
    }
  }
  return s;
}

}  // namespace ddprun::rdzv
