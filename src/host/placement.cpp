// The placement shell: reads the inherited mask and sysfs, asks the pure planners
// (host::plan_numa_binding, host::device_for_local_rank) and records their answers.

#include "ddprun/host/placement.hpp"

#include "ddprun/host/facts.hpp"
#include "ddprun/host/gpus.hpp"
#include "ddprun/host/topology.hpp"
#include "ddprun/util/fatal.hpp"
#include "ddprun/util/strings.hpp"

#include <spdlog/spdlog.h>

namespace ddprun::host {

namespace {

constexpr const char* k_sys_root = "/sys";

using Placements = std::vector<config::WorkerPlacement>;

void pin_gpus(Placements& placements, int nproc, const std::optional<std::string>& visible) {
  for (int lr = 0; lr < nproc; ++lr) {
    auto device = host::device_for_local_rank(visible, lr);
    if (!device) {
      spdlog::warn(
          "--pin-gpus: CUDA_VISIBLE_DEVICES={} has no entry for local rank {}; that "
          "worker sees the whole list",
          util::quoted(visible.value_or("")), lr);
      continue;
    }
    placements[static_cast<std::size_t>(lr)].cuda_visible_devices = *device;
    spdlog::info("local rank {}: CUDA_VISIBLE_DEVICES={} (--pin-gpus; LOCAL_RANK stays {})", lr,
                 *device, lr);
  }
}

/// --virtual-local-rank: torch 2.10's mapping. A list too short for a local rank cannot work
/// (torch raises ValueError when it starts the workers), so ddprun stops before spawning any.
void virtualize_local_ranks(Placements& placements, int nproc,
                            const std::optional<std::string>& visible) {
  for (int lr = 0; lr < nproc; ++lr) {
    auto device = host::virtual_device_for_local_rank(visible, lr);
    if (!device) {
      throw Fatal(make_error(
          ErrorCode::usage,
          fmt::format("--virtual-local-rank: CUDA_VISIBLE_DEVICES={} has no entry for local rank "
                      "{}; expected at least {} comma-separated devices (--nproc-per-node)",
                      util::quoted(visible.value_or("")), lr, nproc)));
    }
    auto& place = placements[static_cast<std::size_t>(lr)];
    place.cuda_visible_devices = *device;
    place.local_rank_env = 0;
    spdlog::info("local rank {}: CUDA_VISIBLE_DEVICES={}, LOCAL_RANK=0 (--virtual-local-rank)", lr,
                 *device);
  }
}

/// The NUMA node of each local rank's GPU, where NVML and sysfs can tell.
std::vector<std::optional<int>> gpu_numa_nodes(int nproc, const std::optional<std::string>& visible,
                                               const NvmlInfo& nvml) {
  std::vector<std::optional<int>> nodes;
  for (int lr = 0; lr < nproc; ++lr) {
    auto device = host::device_for_local_rank(visible, lr);
    auto bus = device ? host::pci_bus_id_of(*device, nvml.devices) : std::nullopt;
    nodes.push_back(bus ? host::read_pci_numa_node(k_sys_root, *bus) : std::nullopt);
  }
  return nodes;
}

bool any_known(const std::vector<std::optional<int>>& nodes) {
  for (const auto& n : nodes) {
    if (n) {
      return true;
    }
  }
  return false;
}

NumaMode numa_mode(config::NumaBinding binding) {
  switch (binding) {
    case config::NumaBinding::socket:
      return NumaMode::socket;
    case config::NumaBinding::exclusive:
      return NumaMode::exclusive;
    case config::NumaBinding::core_complex:
      return NumaMode::core_complex;
    case config::NumaBinding::node:
    case config::NumaBinding::none:
      break;
  }
  return NumaMode::node;
}

void bind_cpus(Placements& placements, int nproc, config::NumaBinding binding,
               const std::optional<std::string>& visible, const NvmlInfo& nvml) {
  const auto name = config::to_string(binding);
  auto topo = value_or_throw(host::read_topology(k_sys_root, affinity_cpus()));
  auto gpu_nodes = gpu_numa_nodes(nproc, visible, nvml);
  if (!any_known(gpu_nodes)) {
    spdlog::info(
        "--numa-binding {}: no GPU NUMA information ({}); local ranks take the NUMA "
        "nodes round-robin",
        name, nvml.loaded ? "no NUMA node for the workers' GPUs in sysfs" : nvml.failure);
  }
  auto plan = value_or_throw(host::plan_numa_binding(topo, numa_mode(binding), gpu_nodes, nproc));
  for (const auto& note : plan.notes) {
    spdlog::warn("--numa-binding {}: {}", name, note);
  }
  for (std::size_t lr = 0; lr < plan.cpus.size(); ++lr) {
    placements[lr].cpus = plan.cpus[lr];
    spdlog::info("local rank {}: CPUs {} (--numa-binding {})", lr,
                 host::render_cpu_list(plan.cpus[lr]), name);
  }
}

}  // namespace

bool needs_nvml(const cli::ParsedArgs& args, const util::Env& env) {
  const auto& n = args.at(cli::flag::k_nproc_per_node).value;
  const bool counts_gpus = (n == "gpu" || n == "auto") && !env.has("CUDA_VISIBLE_DEVICES");
  return counts_gpus || !args.at(cli::flag::k_numa_binding).value.empty();
}

bool needs_fabric(const cli::ParsedArgs& args, const sched::Detected& detected,
                  const util::Env& env) {
  std::string nnodes = args.at(cli::flag::k_nnodes).value;
  if (args.at(cli::flag::k_nnodes).origin == cli::Origin::default_value && detected.nnodes) {
    nnodes = detected.nnodes->text;  // the scheduler's count, as config::resolve takes it
  }
  const bool many = nnodes != "1" && nnodes != "1:1";
  const bool dynamic = args.at(cli::flag::k_rdzv_backend).value != "static" &&
                       !args.flag_on(cli::flag::k_standalone);
  const bool given = env.has("DDPRUN_NODE_DOMAIN") ||
                     args.at(cli::flag::k_rdzv_conf).value.find("node_domain") != std::string::npos;
  return many && dynamic && !given;
}

std::vector<config::WorkerPlacement> plan_placements(int nproc,
                                                     const config::WorkerResources& resources,
                                                     const util::Env& env, const NvmlInfo& nvml) {
  const bool binds = resources.numa_binding != config::NumaBinding::none;
  if (!binds && !resources.pin_gpus && !resources.virtual_local_rank) {
    return {};
  }
  Placements placements(static_cast<std::size_t>(nproc));
  const auto visible = env.get("CUDA_VISIBLE_DEVICES");
  if (resources.virtual_local_rank) {
    virtualize_local_ranks(placements, nproc, visible);
  } else if (resources.pin_gpus) {
    pin_gpus(placements, nproc, visible);
  }
  if (binds) {
    bind_cpus(placements, nproc, resources.numa_binding, visible, nvml);
  }
  return placements;
}

}  // namespace ddprun::host
