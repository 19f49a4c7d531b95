// The sysfs shell of --numa-binding: reads what plan_numa_binding needs into a Topology.

#include "ddprun/host/cpus.hpp"
#include "ddprun/host/topology.hpp"
#include "ddprun/util/files.hpp"
#include "ddprun/util/strings.hpp"

#include <filesystem>
#include <set>

namespace ddprun::host {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t k_max_sysfs_bytes = 64 * 1024;
constexpr int k_max_cache_index = 8;

/// The file's trimmed text, or nullopt when it cannot be read (absent on this machine).
std::optional<std::string> read_small(const fs::path& path) {
  auto text = util::read_file_or_error(path.string(), k_max_sysfs_bytes);
  if (!text) {
    return std::nullopt;
  }
  return std::string(util::trim(*text));
}

Result<std::optional<int>> read_int_file(const fs::path& path) {
  auto text = read_small(path);
  if (!text) {
    return std::optional<int>();
  }
  auto v = util::parse_int_in(*text, -1, 1 << 30);
  if (!v) {
    return make_error(ErrorCode::io,
                      path.string() + ": " + util::quoted(*text) + " is not an integer");
  }
  return std::optional<int>(static_cast<int>(*v));
}

Result<void> read_nodes(const fs::path& root, Topology& topo) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root / "devices/system/node", ec)) {
    const auto name = entry.path().filename().string();
    auto id = util::starts_with(name, "node") ? util::parse_int_in(name.substr(4), 0, 1 << 20)
                                              : Result<std::int64_t>(make_error(ErrorCode::io, ""));
    auto text = id ? read_small(entry.path() / "cpulist") : std::nullopt;
    if (!text) {
      continue;
    }
    auto cpus = parse_cpu_list(*text);
    if (!cpus) {
      return make_error(ErrorCode::io,
                        (entry.path() / "cpulist").string() + ": " + cpus.error().message);
    }
    topo.node_cpus[static_cast<int>(*id)] = *cpus;
  }
  if (topo.node_cpus.empty()) {
    topo.node_cpus[0] = topo.allowed;  // no NUMA in this kernel: one node
  }
  return {};
}

/// The CPU list of the level-3 cache `cpu_dir` belongs to, if sysfs describes one.
Result<std::optional<std::vector<int>>> read_l3(const fs::path& cpu_dir) {
  for (int i = 0; i < k_max_cache_index; ++i) {
    const auto dir = cpu_dir / "cache" / ("index" + std::to_string(i));
    auto level = read_small(dir / "level");
    if (!level || *level != "3") {
      continue;
    }
    auto text = read_small(dir / "shared_cpu_list");
    if (!text) {
      return std::optional<std::vector<int>>();
    }
    auto cpus = parse_cpu_list(*text);
    if (!cpus) {
      return make_error(ErrorCode::io,
                        (dir / "shared_cpu_list").string() + ": " + cpus.error().message);
    }
    return std::optional<std::vector<int>>(*cpus);
  }
  return std::optional<std::vector<int>>();
}

Result<void> read_cpu(const fs::path& root, int cpu, Topology& topo,
                      std::set<std::vector<int>>& l3_seen) {
  const auto dir = root / "devices/system/cpu" / ("cpu" + std::to_string(cpu));
  auto pkg = read_int_file(dir / "topology/physical_package_id");
  auto core = read_int_file(dir / "topology/core_id");
  auto l3 = read_l3(dir);
  if (!pkg || !core || !l3) {
    return !pkg ? pkg.error() : !core ? core.error() : l3.error();
  }
  if (*pkg && *core) {
    topo.package_of[cpu] = **pkg;
    topo.core_of[cpu] = **core;
  }
  if (*l3 && l3_seen.insert(**l3).second) {
    topo.l3_domains.push_back(**l3);
  }
  return {};
}

}  // namespace

Result<Topology> read_topology(const std::string& sys_root, const std::vector<int>& allowed) {
  Topology topo;
  topo.allowed = allowed;
  const fs::path root(sys_root);
  if (auto r = read_nodes(root, topo); !r) {
    return r.error();
  }
  std::set<std::vector<int>> l3_seen;
  for (int cpu : allowed) {
    if (auto r = read_cpu(root, cpu, topo, l3_seen); !r) {
      return r.error();
    }
  }
  return topo;
}

std::optional<int> read_pci_numa_node(const std::string& sys_root, const std::string& bus_id) {
  auto node = read_int_file(fs::path(sys_root) / "bus/pci/devices" / bus_id / "numa_node");
  if (!node || !*node || **node < 0) {
    return std::nullopt;
  }
  return **node;
}

}  // namespace ddprun::host
