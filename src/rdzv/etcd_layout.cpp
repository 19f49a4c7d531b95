#include "ddprun/rdzv/etcd_layout.hpp"

#include "ddprun/rdzv/state.hpp"
#include "ddprun/util/backoff.hpp"
#include "ddprun/util/strings.hpp"

#include <algorithm>

namespace ddprun::rdzv {

std::string etcd_run_prefix(std::string_view key_prefix, std::string_view run_id) {
  return std::string(key_prefix) + "/" + std::string(run_id) + "/";
}

std::string etcd_generation_key(std::string_view run_prefix) {
  return std::string(run_prefix) + "run";
}

std::string etcd_generation_prefix(std::string_view run_prefix, std::int64_t generation) {
  return std::string(run_prefix) + "g" + std::to_string(generation) + "/";
}

std::string etcd_end_record_key(std::string_view run_prefix, std::int64_t generation) {
  return std::string(run_prefix) + "ended/g" + std::to_string(generation);
}

std::string etcd_alive_prefix(std::string_view generation_prefix) {
  return std::string(generation_prefix) + "alive/";
}

std::optional<std::int64_t> parse_generation(std::string_view value) {
  auto n = util::parse_int(value);
  if (!n || *n < 1) {
    return std::nullopt;
  }
  return *n;
}

bool is_node_own_key(std::string_view run_id, std::string_view key) {
  // The run's keys all start with the state key's directory (state.hpp's layout).
  const std::string state = state_key(std::string(run_id));
  const std::string_view dir = std::string_view(state).substr(0, state.size() - 5);  // "state"
  if (key.substr(0, dir.size()) != dir) {
    return false;
  }
  const std::string_view rest = key.substr(dir.size());
  if (rest.substr(0, 3) == "hb/" || rest.substr(0, 9) == "progress/" ||
      rest.substr(0, 6) == "stall/") {
    return true;
  }
  const auto slash = rest.find('/');
  if (slash == std::string_view::npos || slash == 0) {
    return false;
  }
  for (char c : rest.substr(0, slash)) {
    if (c < '0' || c > '9') {
      return false;
    }
  }
  return rest.substr(slash + 1, 5) == "slot/";
}

GenerationChoice decide_generation(const GenerationView& view) {
  if (!view.current) {
    return {1, true};
  }
  if (view.closed || !view.any_alive || view.silent) {
    return {*view.current + 1, true};
  }
  return {*view.current, false};
}

bool should_delete_previous(const GenerationView& view) {
  return view.current && (!view.any_alive || (view.silent && !view.closed));
}

std::optional<RoundHeader> carried_header(const RoundHeader& previous) {
  if (previous.closed || previous.excluded.empty()) {
    return std::nullopt;
  }
  RoundHeader fresh;
  fresh.excluded = previous.excluded;
  return fresh;
}

std::chrono::seconds lease_ttl(const RdzvSettings& settings) {
  constexpr std::chrono::seconds k_min_ttl{3};
  const auto bound = std::chrono::ceil<std::chrono::seconds>(keep_alive_bound(settings));
  return std::max(bound, k_min_ttl);
}

std::chrono::milliseconds etcd_retry_pause(int attempt, double spread) {
  constexpr int k_doublings = 4;  // 500 ms x 2^4 = 8 s
  return util::backoff_pause(std::chrono::milliseconds(500), attempt, k_doublings, spread);
}

}  // namespace ddprun::rdzv
