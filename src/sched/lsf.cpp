// LSF detection (spec/schedulers.md §3). LSB_MCPU_HOSTS lists "host slots" pairs in allocation
// order; LSB_HOSTS repeats a host once per slot. On jsrun (CSM, Summit-style) clusters the first
// host is the launch/batch node, often listed with a single slot: when the first host has one
// slot and the next has more, it is dropped (Lightning's LSFEnvironment skips it likewise).
// This node's index is its position among the remaining hosts.

#include "ddprun/sched/env_names.hpp"
#include "ddprun/sched/ports.hpp"
#include "ddprun/util/strings.hpp"

#include "common.hpp"

namespace ddprun::sched {

namespace {

namespace n = env_names;
using detail::config_error;
using detail::make_value;

constexpr std::string_view k_lsf = "lsf";
constexpr std::int64_t k_max_slots = 1'000'000;

struct HostSlots {
  std::string host;
  std::int64_t slots = 0;
};

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  std::string word;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n') {
      if (!word.empty()) {
        out.push_back(std::move(word));
      }
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) {
    out.push_back(std::move(word));
  }
  return out;
}

Result<std::vector<HostSlots>> parse_mcpu_hosts(const std::string& text) {
  const auto w = words(text);
  std::vector<HostSlots> out;
  for (std::size_t i = 0; i + 1 < w.size(); i += 2) {
    auto slots = util::parse_int_in(w[i + 1], 1, k_max_slots);
    if (!slots) {
      break;
    }
    out.push_back({w[i], *slots});
  }
  if (w.empty() || w.size() % 2 != 0 || out.size() * 2 != w.size()) {
    return config_error(k_lsf, "LSB_MCPU_HOSTS=" + util::quoted(text) +
                                   ": expected 'host slots' pairs with slots >= 1");
  }
  return out;
}

/// Hosts from LSB_MCPU_HOSTS (skipping a jsrun launch node) or LSB_HOSTS.
Result<std::vector<std::string>> lsf_hosts(Detected& d, const util::Env& env) {
  if (auto mcpu = env.get_nonempty(n::k_lsb_mcpu_hosts)) {
    auto pairs = parse_mcpu_hosts(*mcpu);
    if (!pairs) {
      return pairs.error();
    }
    std::size_t first = 0;
    if (pairs->size() >= 2 && (*pairs)[0].slots == 1 && (*pairs)[1].slots > 1) {
      d.warnings.push_back("lsf: skipping launch node " + util::quoted((*pairs)[0].host) +
                           " (1 slot, listed first in LSB_MCPU_HOSTS)");
      first = 1;
    }
    std::vector<std::string> hosts;
    for (std::size_t i = first; i < pairs->size(); ++i) {
      hosts.push_back((*pairs)[i].host);
    }
    return detail::dedupe(hosts);
  }
  if (auto per_slot = env.get_nonempty(n::k_lsb_hosts)) {
    return detail::dedupe(words(*per_slot));
  }
  return config_error(k_lsf, "neither LSB_MCPU_HOSTS nor LSB_HOSTS is set");
}

Result<void> set_lsf_tasks(Detected& d, const util::Env& env) {
  auto local = detail::int_var(env, k_lsf, n::k_jsm_local_size, 1, static_cast<int>(k_max_slots));
  if (!local) {
    return local.error();
  }
  if (*local) {
    d.tasks_on_node = make_value(k_lsf, n::k_jsm_local_size, std::to_string(**local));
  }
  return {};
}

}  // namespace

Result<Detected> detect_lsf(const util::Env& env, const std::string& this_hostname) {
  Detected d;
  auto job = detail::first_of(env, {n::k_lsb_jobid});
  if (!job) {
    return d;
  }
  d.scheduler = std::string(k_lsf);
  auto job_id = detail::job_number(k_lsf, *job);
  if (!job_id) {
    return job_id.error();
  }
  auto index = env.get_nonempty(n::k_lsb_jobindex);
  const bool array = index && *index != "0";
  const std::string id_origin = array ? "LSB_JOBID + LSB_JOBINDEX" : "LSB_JOBID";
  d.rdzv_id = make_value(k_lsf, id_origin, job->value + (array ? "." + *index : ""));
  detail::set_ports(d, array ? port_key_of(d.rdzv_id->text) : *job_id, id_origin);
  auto hosts = lsf_hosts(d, env);
  if (!hosts) {
    return hosts.error();
  }
  auto rank = detail::find_host(*hosts, this_hostname);
  if (!rank) {
    return config_error(k_lsf, "this host " + util::quoted(this_hostname) +
                                   " is not among the job's compute hosts (" +
                                   detail::list_for_message(*hosts) +
                                   "); start one ddprun per compute node with jsrun or blaunch");
  }
  const bool by_mcpu = env.get_nonempty(n::k_lsb_mcpu_hosts).has_value();
  detail::set_hosts(d, std::move(*hosts), by_mcpu ? n::k_lsb_mcpu_hosts : n::k_lsb_hosts);
  d.node_rank = make_value(k_lsf, "this host's position in the host list", std::to_string(*rank));
  detail::set_gpu_hint(d, env);
  auto r = set_lsf_tasks(d, env);
  if (!r) {
    return r.error();
  }
  return d;
}

}  // namespace ddprun::sched
