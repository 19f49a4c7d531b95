#pragma once
// Where each local worker runs: --numa-binding CPU sets and --pin-gpus device lists, computed
// once per agent (the local world size is fixed) from sysfs and NVML.

#include "ddprun/cli/args.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/host/nvml.hpp"
#include "ddprun/sched/detect.hpp"
#include "ddprun/util/env.hpp"

#include <vector>

namespace ddprun::host {

/// True when NVML must be asked: --nproc-per-node gpu|auto without CUDA_VISIBLE_DEVICES
/// (the count), or --numa-binding (each GPU's PCI bus id, hence its NUMA node).
bool needs_nvml(const cli::ParsedArgs& args, const util::Env& env);

/// True when the node's domain may come from the GPUs' NVLink fabric (query_fabric): a
/// c10d or etcd-v3 rendezvous of more than one node (--nnodes, else the scheduler's count)
/// that neither DDPRUN_NODE_DOMAIN nor --rdzv-conf node_domain gives a domain.
bool needs_fabric(const cli::ParsedArgs& args, const sched::Detected& detected,
                  const util::Env& env);

/// Where each of the `nproc` local workers runs, as `resources` asks (empty when it asks for
/// nothing); logs each worker's placement at INFO, compromises at WARNING.
/// Throws Fatal when --numa-binding cannot be honoured (sysfs unreadable, empty mask), or when
/// --virtual-local-rank finds fewer CUDA_VISIBLE_DEVICES items than workers (usage, exit 2).
/// --virtual-local-rank wins over --pin-gpus (it pins the same way and also sets LOCAL_RANK=0).
std::vector<config::WorkerPlacement> plan_placements(int nproc,
                                                     const config::WorkerResources& resources,
                                                     const util::Env& env, const NvmlInfo& nvml);

}  // namespace ddprun::host
