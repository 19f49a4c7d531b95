// PBS Pro / OpenPBS / Torque detection (spec/schedulers.md §2). PBS_NODEFILE has one line per
// MPI slot (a host repeated mpiprocs times, Gadi: once per CPU), short names, allocation order,
// mother superior first: the node list is its unique lines in first-seen order. This node's
// index is PBS_NODENUM when MoM set it (TM-spawned tasks, e.g. pbsdsh), else the position of
// this host's name, compared exactly and then by short name (MoM strips the domain).

#include "ddprun/sched/env_names.hpp"
#include "ddprun/sched/ports.hpp"
#include "ddprun/util/strings.hpp"

#include "common.hpp"

namespace ddprun::sched {

namespace {

namespace n = env_names;
using detail::config_error;
using detail::make_value;

constexpr std::string_view k_pbs = "pbs";
constexpr int k_max_gpus = 1'000'000;

std::vector<std::string> nodefile_hosts(const std::string& contents) {
  std::vector<std::string> lines;
  for (const auto& line : util::split(contents, '\n')) {
    if (auto host = util::trim(line); !host.empty()) {
      lines.emplace_back(host);
    }
  }
  return detail::dedupe(lines);
}

Result<void> set_node_rank(Detected& d, const util::Env& env, const std::string& hostname) {
  const int nnodes = static_cast<int>(d.hosts.size());
  auto nodenum = detail::int_var(env, k_pbs, n::k_pbs_nodenum, 0, nnodes - 1);
  if (!nodenum) {
    return nodenum.error();
  }
  auto by_name = detail::find_host(d.hosts, hostname);
  if (*nodenum) {
    d.node_rank = make_value(k_pbs, n::k_pbs_nodenum, std::to_string(**nodenum));
    if (by_name && *by_name != static_cast<std::size_t>(**nodenum)) {
      d.warnings.push_back("pbs: PBS_NODENUM=" + std::to_string(**nodenum) + " but host " +
                           util::quoted(hostname) + " is line " + std::to_string(*by_name) +
                           " of the deduplicated PBS_NODEFILE; using PBS_NODENUM");
    }
    return {};
  }
  if (by_name) {
    d.node_rank =
        make_value(k_pbs, "PBS_NODEFILE (this host's position)", std::to_string(*by_name));
    return {};
  }
  if (nnodes == 1) {
    d.node_rank = make_value(k_pbs, "PBS_NODEFILE (one-node job)", "0");
    d.warnings.push_back("pbs: host " + util::quoted(hostname) + " is not in PBS_NODEFILE (" +
                         d.hosts.front() + "); assuming node 0 of a one-node job");
    return {};
  }
  return config_error(k_pbs, "this host " + util::quoted(hostname) + " is not in PBS_NODEFILE (" +
                                 detail::list_for_message(d.hosts) +
                                 ") and PBS_NODENUM is not set; pass --node-rank");
}

Result<void> set_gpu_hint(Detected& d, const util::Env& env) {
  detail::set_gpu_hint(d, env);
  auto ngpus = detail::int_var(env, k_pbs, n::k_pbs_ngpus, 1, k_max_gpus);
  if (!ngpus) {
    return ngpus.error();
  }
  const auto nodes = static_cast<int>(d.hosts.size());
  if (d.nproc_hint || !*ngpus || **ngpus % nodes != 0) {
    return {};
  }
  d.nproc_hint = make_value(k_pbs, "PBS_NGPUS / nodes", std::to_string(**ngpus / nodes));
  return {};
}

}  // namespace

Result<Detected> detect_pbs(const util::Env& env, const std::string& nodefile_contents,
                            const std::string& this_hostname) {
  Detected d;
  auto job = detail::first_of(env, {n::k_pbs_jobid});
  if (!job) {
    return d;
  }
  d.scheduler = std::string(k_pbs);
  const std::string id(job->value.substr(0, job->value.find('.')));  // "1234.server" -> "1234"
  d.rdzv_id = make_value(k_pbs, n::k_pbs_jobid, id);
  auto numeric = util::parse_int_in(id, 0, INT64_MAX);
  const bool plain = numeric && id.find_first_not_of("0123456789") == std::string::npos;
  detail::set_ports(d, plain ? static_cast<std::uint64_t>(*numeric) : port_key_of(id),
                    n::k_pbs_jobid);
  auto hosts = nodefile_hosts(nodefile_contents);
  if (hosts.empty()) {
    return config_error(k_pbs, "PBS_NODEFILE lists no hosts");
  }
  detail::set_hosts(d, std::move(hosts), n::k_pbs_nodefile);
  auto r = set_node_rank(d, env, this_hostname);
  if (!r) {
    return r.error();
  }
  r = set_gpu_hint(d, env);
  if (!r) {
    return r.error();
  }
  return d;
}

}  // namespace ddprun::sched
