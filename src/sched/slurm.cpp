// Slurm detection (spec/schedulers.md §1.1–§1.2). Inside a srun step the STEP variables describe
// the launch: SLURM_JOB_NODELIST/SLURM_JOB_NUM_NODES are the whole allocation, which can be
// larger than the step, and SLURM_NODELIST is re-set by srun to the allocation too. In a batch
// script (no step) only the job view exists; ddprun then runs on one node only, so a multi-node
// job gets a warning instead of an nnodes that would wait for agents nobody started.

#include "ddprun/sched/env_names.hpp"
#include "ddprun/sched/hostlist.hpp"
#include "ddprun/sched/ports.hpp"
#include "ddprun/util/strings.hpp"

#include <cstdint>

#include "common.hpp"

namespace ddprun::sched {

namespace {

namespace n = env_names;
using detail::config_error;
using detail::make_value;

constexpr std::string_view k_slurm = "slurm";
constexpr int k_max_nodes = static_cast<int>(k_max_hostlist_names);
constexpr int k_max_restarts = 1'000'000;
/// The longest SLURM_TOPOLOGY_ADDR path kept (a node domain has the same bound).
constexpr std::size_t k_max_topology_chars = 128;
/// rdzv id of a requeued job: "<job>.<step>.r<SLURM_RESTART_COUNT>".
constexpr const char* k_epoch_separator = ".r";

Result<std::vector<std::string>> expand_var(const detail::Found& list) {
  auto hosts = expand_hostlist(list.value);
  if (!hosts) {
    return config_error(k_slurm, list.name + ": " + hosts.error().message +
                                     " (expected a hostlist such as node[01-04],gpu7)");
  }
  return hosts;
}

/// Tasks srun started on node `node` of the step, from SLURM_STEP_TASKS_PER_NODE ("2(x3),1")
/// or SLURM_NTASKS_PER_NODE (set only when --ntasks-per-node was given).
Result<void> set_tasks_on_node(Detected& d, const util::Env& env, int node) {
  if (auto per_node = env.get_nonempty(n::k_slurm_step_tasks_per_node)) {
    auto counts = expand_per_node_counts(*per_node);
    if (!counts || static_cast<std::size_t>(node) >= counts->size()) {
      return config_error(k_slurm, std::string(n::k_slurm_step_tasks_per_node) + "=" +
                                       util::quoted(*per_node) + ": expected N(xM) counts for " +
                                       "node index " + std::to_string(node));
    }
    d.tasks_on_node = make_value(k_slurm, n::k_slurm_step_tasks_per_node,
                                 std::to_string((*counts)[static_cast<std::size_t>(node)]));
    return {};
  }
  auto per_node = detail::int_var(env, k_slurm, n::k_slurm_ntasks_per_node, 1, k_max_nodes);
  if (!per_node) {
    return per_node.error();
  }
  if (*per_node) {
    d.tasks_on_node = make_value(k_slurm, n::k_slurm_ntasks_per_node, std::to_string(**per_node));
  }
  return {};
}

/// Step view: nnodes, hosts, node index, tasks on this node.
Result<void> read_step(Detected& d, const util::Env& env, const detail::Found& nodelist) {
  auto hosts = expand_var(nodelist);
  if (!hosts) {
    return hosts.error();
  }
  if (hosts->empty()) {
    return config_error(k_slurm,
                        nodelist.name + "=" + util::quoted(nodelist.value) + " lists no hosts");
  }
  auto count = detail::first_of(env, {n::k_slurm_step_num_nodes, n::k_slurm_nnodes});
  auto counted = count ? util::parse_int(count->value) : Result<std::int64_t>(std::int64_t{0});
  if (count && (!counted || *counted != static_cast<std::int64_t>(hosts->size()))) {
    return config_error(k_slurm, count->name + "=" + util::quoted(count->value) +
                                     ": expected the number of hosts in " + nodelist.name + "=" +
                                     util::quoted(nodelist.value) + " (" +
                                     std::to_string(hosts->size()) + ")");
  }
  const int nnodes = static_cast<int>(hosts->size());
  detail::set_hosts(d, std::move(*hosts), nodelist.name);
  if (count) {
    d.nnodes->origin = "slurm: " + count->name;
  }
  auto node = detail::int_var(env, k_slurm, n::k_slurm_nodeid, 0, nnodes - 1);
  if (!node) {
    return node.error();
  }
  if (!*node) {
    return config_error(k_slurm, std::string(n::k_slurm_nodeid) + " is not set inside a step of " +
                                     nodelist.name + "=" + util::quoted(nodelist.value));
  }
  d.node_rank = make_value(k_slurm, n::k_slurm_nodeid, std::to_string(**node));
  auto slurm_name = env.get_nonempty(n::k_slurmd_nodename);
  if (slurm_name && *slurm_name != d.hosts[static_cast<std::size_t>(**node)]) {
    d.warnings.push_back("slurm: SLURM_NODEID=" + std::to_string(**node) + " names host '" +
                         d.hosts[static_cast<std::size_t>(**node)] + "' but SLURMD_NODENAME is " +
                         util::quoted(*slurm_name));
  }
  return set_tasks_on_node(d, env, **node);
}

/// Job view (batch script or salloc shell): usable as is only for a one-node job, and only on
/// that node (SLURMD_NODENAME tells; an salloc shell on a login node has none).
Result<void> read_job(Detected& d, const util::Env& env) {
  auto nodelist = detail::first_of(env, {n::k_slurm_job_nodelist, n::k_slurm_nodelist});
  if (!nodelist) {
    return {};
  }
  auto hosts = expand_var(*nodelist);
  if (!hosts) {
    return hosts.error();
  }
  auto slurm_name = env.get_nonempty(n::k_slurmd_nodename);
  if (hosts->size() == 1 && slurm_name != hosts->front()) {
    d.hosts = std::move(*hosts);
    d.warnings.push_back("slurm: not on the job's node " + util::quoted(d.hosts.front()) +
                         " (SLURMD_NODENAME=" + util::quoted(slurm_name.value_or("")) +
                         ", salloc shell on a login node?): start ddprun with srun");
    return {};
  }
  if (hosts->size() == 1) {
    detail::set_hosts(d, std::move(*hosts), nodelist->name + " (one-node job)");
    d.node_rank = make_value(k_slurm, nodelist->name + " (one-node job)", "0");
    return {};
  }
  d.hosts = std::move(*hosts);
  d.warnings.push_back(
      "slurm: no srun step (batch script or salloc shell) in a " + std::to_string(d.hosts.size()) +
      "-node job: ddprun starts itself on every node through srun (--launcher auto); "
      "with --launcher none it runs on this node only");
  if (env.get_nonempty(n::k_slurm_het_size)) {
    d.warnings.push_back(
        "slurm: heterogeneous job: outside a step only component 0's "
        "SLURM_JOB_NODELIST is visible");
  }
  return {};
}

Result<void> set_slurm_ports(Detected& d, const util::Env& env, std::uint64_t key,
                             const std::string& key_origin) {
  auto resv = env.get_nonempty(n::k_slurm_step_resv_ports);
  if (!resv) {
    detail::set_ports(d, key, key_origin);
    return {};
  }
  auto ports = parse_port_range(*resv);
  if (!ports) {
    return config_error(k_slurm,
                        std::string(n::k_slurm_step_resv_ports) + ": " + ports.error().message);
  }
  d.port_candidates = *ports;
  d.rdzv_port = make_value(k_slurm, n::k_slurm_step_resv_ports, std::to_string(ports->front()));
  return {};
}

/// SLURM_RESTART_COUNT (requeues of a batch job); 0 when unset.
Result<std::int64_t> set_restart_epoch(Detected& d, const util::Env& env) {
  auto restarts = detail::int_var(env, k_slurm, n::k_slurm_restart_count, 0, k_max_restarts);
  if (!restarts) {
    return restarts.error();
  }
  if (*restarts) {
    d.restart_epoch = make_value(k_slurm, n::k_slurm_restart_count, std::to_string(**restarts));
  }
  return restarts->value_or(0);
}

Result<void> set_gpus(Detected& d, const util::Env& env) {
  detail::set_gpu_hint(d, env);
  if (d.nproc_hint) {
    return {};
  }
  auto gpus = detail::int_var(env, k_slurm, n::k_slurm_gpus_on_node, 0, k_max_nodes);
  if (!gpus) {
    return gpus.error();
  }
  if (*gpus && **gpus > 0) {
    d.nproc_hint = make_value(k_slurm, n::k_slurm_gpus_on_node, std::to_string(**gpus));
  }
  return {};
}

/// The node's place from SLURM_TOPOLOGY_ADDR (spec/schedulers.md, Appendix: "s0.s4.tux1" with
/// pattern "switch.switch.node", "b8.tux1" with "block.node"): the part before the node's name
/// orders nodes, a block is their domain. Flat topology ("node") and odd values say nothing.
void set_topology(Detected& d, const util::Env& env) {
  auto addr = env.get_nonempty(n::k_slurm_topology_addr);
  auto pattern = env.get_nonempty(n::k_slurm_topology_addr_pattern);
  if (!addr || !pattern) {
    return;
  }
  const auto kinds = util::split(*pattern, '.');
  const auto parts = util::split(*addr, '.');
  if (kinds.size() < 2 || kinds.back() != "node" || parts.size() < kinds.size()) {
    return;  // a node name may hold dots: the node is everything after the levels
  }
  std::string path;
  for (std::size_t i = 0; i + 1 < kinds.size(); ++i) {
    path += (i == 0 ? "" : ".") + parts[i];
  }
  if (path.size() > k_max_topology_chars) {
    return;  // no real tree is this deep; it would only swell every members list
  }
  d.topology = make_value(k_slurm, n::k_slurm_topology_addr, path);
  if (kinds.size() == 2 && kinds.front() == "block") {
    d.block = make_value(k_slurm, std::string(n::k_slurm_topology_addr) + " (block)", parts[0]);
  }
}

}  // namespace

Result<Detected> detect_slurm(const util::Env& env) {
  Detected d;
  auto job = detail::first_of(env, {n::k_slurm_job_id, n::k_slurm_job_id_legacy});
  if (!job) {
    return d;
  }
  d.scheduler = std::string(k_slurm);
  auto job_id = detail::job_number(k_slurm, *job);
  if (!job_id) {
    return job_id.error();
  }
  auto step = detail::first_of(env, {n::k_slurm_step_id, n::k_slurm_step_id_legacy});
  auto step_nodelist = detail::first_of(env, {n::k_slurm_step_nodelist});
  const bool in_step = step_nodelist.has_value();
  auto r = in_step ? read_step(d, env, *step_nodelist) : read_job(d, env);
  if (!r) {
    return r.error();
  }
  auto epoch = set_restart_epoch(d, env);
  if (!epoch) {
    return epoch.error();
  }
  const std::string step_text = step ? step->value : (in_step ? "step" : "batch");
  std::string id_origin = step ? job->name + " + " + step->name : job->name;
  std::string id_text = job->value + "." + step_text;
  if (*epoch > 0) {
    // A requeued job must not meet its previous incarnation's rendezvous state or store.
    id_origin += " + " + std::string(n::k_slurm_restart_count);
    id_text += k_epoch_separator + std::to_string(*epoch);
  }
  d.rdzv_id = make_value(k_slurm, id_origin, id_text);
  auto step_number = util::parse_int_in(step_text, 0, INT32_MAX);
  const auto key = *job_id + static_cast<std::uint64_t>(step_number ? *step_number : 0) +
                   static_cast<std::uint64_t>(*epoch) * k_port_candidates;
  r = set_slurm_ports(d, env, key, id_origin);
  if (!r) {
    return r.error();
  }
  r = set_gpus(d, env);
  if (!r) {
    return r.error();
  }
  if (in_step) {  // a batch script sees the batch host's place only
    set_topology(d, env);
  }
  return d;
}

}  // namespace ddprun::sched
