#pragma once
// CPU topology (NUMA nodes, sockets, cores, L3 domains) and the per-worker CPU sets of
// --numa-binding, computed within the inherited affinity mask. plan_numa_binding is pure;
// read_topology (topology_io.cpp) is the sysfs shell that fills a Topology.

#include "ddprun/util/result.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ddprun::host {

/// torchrun's --numa-binding modes (spec torchrun.md §8.6).
enum class NumaMode { node, socket, exclusive, core_complex };

/// "node", "socket", "exclusive" or "core-complex".
Result<NumaMode> parse_numa_mode(std::string_view text);

/// What sysfs says about this machine's CPUs.
struct Topology {
  std::vector<int> allowed;                   ///< the inherited affinity mask
  std::map<int, std::vector<int>> node_cpus;  ///< NUMA node -> its CPUs (all, not only allowed)
  std::map<int, int> package_of;              ///< CPU -> physical_package_id
  std::map<int, int> core_of;                 ///< CPU -> core_id (unique within a package)
  std::vector<std::vector<int>> l3_domains;   ///< distinct L3 shared_cpu_lists; may be empty
};

/// The CPU set of each local worker, plus one line per compromise made (to be logged).
struct BindingPlan {
  std::vector<std::vector<int>> cpus;  ///< index = local rank; never empty when planned
  std::vector<std::string> notes;
};

/// Computes each worker's CPUs. `gpu_nodes[i]` is the NUMA node of local rank i's GPU when
/// known; a worker without one (or whose node has no allowed CPU) takes the nodes with allowed
/// CPUs round-robin by local rank. node: the allowed CPUs of the node; socket: the allowed CPUs
/// of the node's package; exclusive: the node's allowed physical cores split evenly among the
/// workers on that node (lower local ranks get the remainder; logical CPUs when there are fewer
/// cores than workers; shared when even those run out); core-complex: the k-th worker on a
/// node gets the node's k-th L3 domain (shared round-robin when there are fewer domains, the
/// whole node when sysfs has no L3 information). Errors (ErrorCode::config) when the mask has
/// no CPU of any known node.
Result<BindingPlan> plan_numa_binding(const Topology& topo, NumaMode mode,
                                      const std::vector<std::optional<int>>& gpu_nodes, int nproc);

/// [0,1,2,5,7,8] -> "0-2,5,7-8" (the Cpus_allowed_list form).
std::string render_cpu_list(const std::vector<int>& cpus);

/// Reads /sys/devices/system/node/node*/cpulist, cpu*/topology/{physical_package_id,core_id}
/// and cpu*/cache/index3/shared_cpu_list under `sys_root` (normally "/sys"). Machines without
/// NUMA directories are one node 0 holding every allowed CPU. Missing per-CPU files leave that
/// CPU out of package_of/core_of. ErrorCode::io only when a present file cannot be parsed.
Result<Topology> read_topology(const std::string& sys_root, const std::vector<int>& allowed);

/// NUMA node of a PCI device from <sys_root>/bus/pci/devices/<bus_id>/numa_node; nullopt when
/// the file is missing or says -1 (no NUMA information).
std::optional<int> read_pci_numa_node(const std::string& sys_root, const std::string& bus_id);

}  // namespace ddprun::host
