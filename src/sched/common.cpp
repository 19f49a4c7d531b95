#include "common.hpp"

#include "ddprun/host/gpus.hpp"
#include "ddprun/sched/env_names.hpp"
#include "ddprun/sched/ports.hpp"
#include "ddprun/util/strings.hpp"

#include <algorithm>
#include <cstdint>

namespace ddprun::sched::detail {

namespace {
constexpr std::size_t k_hosts_in_messages = 4;
}  // namespace

Value make_value(std::string_view scheduler, std::string_view origin, std::string text) {
  return Value{std::move(text), std::string(scheduler) + ": " + std::string(origin)};
}

std::optional<Found> first_of(const util::Env& env, std::initializer_list<std::string_view> names) {
  for (auto name : names) {
    if (auto v = env.get_nonempty(name)) {
      return Found{std::string(name), std::move(*v)};
    }
  }
  return std::nullopt;
}

Error config_error(std::string_view scheduler, const std::string& message) {
  return make_error(ErrorCode::config, std::string(scheduler) + ": " + message);
}

Result<std::optional<int>> int_var(const util::Env& env, std::string_view scheduler,
                                   std::string_view var, int lo, int hi) {
  auto text = env.get_nonempty(var);
  if (!text) {
    return std::optional<int>{};
  }
  auto v = util::parse_int_in(*text, lo, hi);
  if (!v) {
    return config_error(scheduler, std::string(var) + "=" + util::quoted(*text) +
                                       ": expected an integer in [" + std::to_string(lo) + ", " +
                                       std::to_string(hi) + "]");
  }
  return std::optional<int>{static_cast<int>(*v)};
}

Result<std::uint64_t> job_number(std::string_view scheduler, const Found& id) {
  auto v = util::parse_int_in(id.value, 0, INT64_MAX);
  if (!v || id.value.find_first_not_of("0123456789") != std::string::npos) {
    return config_error(scheduler,
                        id.name + "=" + util::quoted(id.value) + ": expected a decimal job id");
  }
  return static_cast<std::uint64_t>(*v);
}

std::string_view short_name(std::string_view host) { return host.substr(0, host.find('.')); }

std::optional<std::size_t> find_host(const std::vector<std::string>& hosts,
                                     std::string_view hostname) {
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    if (hosts[i] == hostname) {
      return i;
    }
  }
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    if (!hostname.empty() && short_name(hosts[i]) == short_name(hostname)) {
      return i;
    }
  }
  return std::nullopt;
}

std::vector<std::string> dedupe(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    if (std::find(out.begin(), out.end(), item) == out.end()) {
      out.push_back(item);
    }
  }
  return out;
}

std::string list_for_message(const std::vector<std::string>& hosts) {
  std::string out;
  for (std::size_t i = 0; i < hosts.size() && i < k_hosts_in_messages; ++i) {
    out += (i == 0 ? "" : ", ") + hosts[i];
  }
  return hosts.size() > k_hosts_in_messages ? out + ", ..." : out;
}

void set_hosts(Detected& d, std::vector<std::string> hosts, std::string_view origin_var) {
  d.hosts = std::move(hosts);
  d.nnodes = make_value(d.scheduler, origin_var, std::to_string(d.hosts.size()));
  if (!d.hosts.empty()) {
    d.rdzv_endpoint_host =
        make_value(d.scheduler, std::string(origin_var) + " (first host)", d.hosts.front());
  }
}

void set_ports(Detected& d, std::uint64_t key, std::string_view origin) {
  d.port_candidates = candidate_ports(key);
  d.rdzv_port = make_value(d.scheduler, origin, std::to_string(d.port_candidates.front()));
}

void set_gpu_hint(Detected& d, const util::Env& env) {
  auto cvd = env.get(env_names::k_cuda_visible_devices);
  if (!cvd) {
    return;
  }
  const int n = host::count_visible_devices(*cvd);
  if (n == 0) {
    d.warnings.push_back("CUDA_VISIBLE_DEVICES=" + util::quoted(*cvd) +
                         " makes no GPU visible to the workers");
    return;
  }
  d.nproc_hint = Value{std::to_string(n), "env: CUDA_VISIBLE_DEVICES"};
}

}  // namespace ddprun::sched::detail
