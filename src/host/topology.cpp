// --numa-binding as data: which CPUs each local worker gets, from a Topology value.

#include "ddprun/host/topology.hpp"

#include "ddprun/host/cpus.hpp"
#include "ddprun/util/strings.hpp"

#include <algorithm>
#include <set>
#include <utility>

namespace ddprun::host {

namespace {

using Cpus = std::vector<int>;

Cpus keep_allowed(const Cpus& cpus, const std::set<int>& allowed) {
  Cpus out;
  for (int c : cpus) {
    if (allowed.count(c) != 0) {
      out.push_back(c);
    }
  }
  return out;
}

/// Context shared by the mode functions: the mask as a set and each node's allowed CPUs.
struct View {
  const Topology& topo;
  std::set<int> allowed;
  std::map<int, Cpus> node_allowed;  ///< only nodes with at least one allowed CPU
};

View make_view(const Topology& topo) {
  View v{topo, std::set<int>(topo.allowed.begin(), topo.allowed.end()), {}};
  for (const auto& [node, cpus] : topo.node_cpus) {
    auto mine = keep_allowed(cpus, v.allowed);
    if (!mine.empty()) {
      v.node_allowed[node] = std::move(mine);
    }
  }
  return v;
}

std::vector<int> worker_nodes(const View& v, const std::vector<std::optional<int>>& gpu_nodes,
                              int nproc) {
  std::vector<int> usable;
  for (const auto& entry : v.node_allowed) {
    usable.push_back(entry.first);
  }
  std::vector<int> out;
  for (int i = 0; i < nproc; ++i) {
    const auto idx = static_cast<std::size_t>(i);
    const bool known =
        idx < gpu_nodes.size() && gpu_nodes[idx] && v.node_allowed.count(*gpu_nodes[idx]) != 0;
    out.push_back(known ? *gpu_nodes[idx] : usable[idx % usable.size()]);
  }
  return out;
}

Cpus socket_cpus(const View& v, int node) {
  const auto& mine = v.node_allowed.at(node);
  auto pkg = v.topo.package_of.find(mine.front());
  if (pkg == v.topo.package_of.end()) {
    return mine;
  }
  Cpus out;
  for (int c : v.topo.allowed) {
    auto it = v.topo.package_of.find(c);
    if (it != v.topo.package_of.end() && it->second == pkg->second) {
      out.push_back(c);
    }
  }
  return out;
}

/// Physical cores (hyperthread siblings together), in the order their first CPU appears.
std::vector<Cpus> physical_cores(const View& v, const Cpus& cpus) {
  std::vector<Cpus> cores;
  std::map<std::pair<int, int>, std::size_t> index;
  for (int c : cpus) {
    auto pkg = v.topo.package_of.find(c);
    auto core = v.topo.core_of.find(c);
    if (pkg == v.topo.package_of.end() || core == v.topo.core_of.end()) {
      cores.push_back({c});
      continue;
    }
    auto [it, fresh] = index.emplace(std::make_pair(pkg->second, core->second), cores.size());
    if (fresh) {
      cores.emplace_back();
    }
    cores[it->second].push_back(c);
  }
  return cores;
}

std::vector<Cpus> split_groups(const std::vector<Cpus>& groups, std::size_t workers) {
  std::vector<Cpus> out;
  const std::size_t base = groups.size() / workers;
  const std::size_t extra = groups.size() % workers;
  std::size_t next = 0;
  for (std::size_t w = 0; w < workers; ++w) {
    Cpus mine;
    for (std::size_t k = 0; k < base + (w < extra ? 1 : 0); ++k, ++next) {
      mine.insert(mine.end(), groups[next].begin(), groups[next].end());
    }
    out.push_back(std::move(mine));
  }
  return out;
}

std::vector<Cpus> exclusive_split(const View& v, int node, std::size_t workers,
                                  std::vector<std::string>& notes) {
  const auto& cpus = v.node_allowed.at(node);
  auto cores = physical_cores(v, cpus);
  if (cores.size() >= workers) {
    return split_groups(cores, workers);
  }
  const std::string where =
      "NUMA node " + std::to_string(node) + " (" + render_cpu_list(cpus) + ")";
  notes.push_back(cpus.size() >= workers
                      ? where + " has fewer physical cores than its " + std::to_string(workers) +
                            " workers; splitting its logical CPUs instead"
                      : where + " has fewer CPUs than its " + std::to_string(workers) +
                            " workers; some of them share a CPU");
  return split_cpus_for_workers(cpus, static_cast<int>(workers));
}

std::vector<Cpus> l3_domains_of(const View& v, int node) {
  const std::set<int> mine(v.node_allowed.at(node).begin(), v.node_allowed.at(node).end());
  std::vector<Cpus> out;
  for (const auto& domain : v.topo.l3_domains) {
    auto cpus = keep_allowed(domain, mine);
    if (!cpus.empty()) {
      out.push_back(std::move(cpus));
    }
  }
  return out;
}

/// Local ranks of the workers on each node, in rank order.
std::map<int, std::vector<std::size_t>> workers_by_node(const std::vector<int>& nodes) {
  std::map<int, std::vector<std::size_t>> out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    out[nodes[i]].push_back(i);
  }
  return out;
}

void plan_exclusive(const View& v, const std::vector<int>& nodes, BindingPlan& plan) {
  for (const auto& [node, ranks] : workers_by_node(nodes)) {
    auto parts = exclusive_split(v, node, ranks.size(), plan.notes);
    for (std::size_t k = 0; k < ranks.size(); ++k) {
      plan.cpus[ranks[k]] = parts[k];
    }
  }
}

void plan_core_complex(const View& v, const std::vector<int>& nodes, BindingPlan& plan) {
  for (const auto& [node, ranks] : workers_by_node(nodes)) {
    auto domains = l3_domains_of(v, node);
    const std::string where = "NUMA node " + std::to_string(node);
    if (domains.empty()) {
      plan.notes.push_back(where + ": no L3 cache information; binding to the whole node");
      domains.push_back(v.node_allowed.at(node));
    } else if (domains.size() < ranks.size()) {
      plan.notes.push_back(where + " has " + std::to_string(domains.size()) + " L3 domain(s) for " +
                           std::to_string(ranks.size()) + " workers; some of them share one");
    }
    for (std::size_t k = 0; k < ranks.size(); ++k) {
      plan.cpus[ranks[k]] = domains[k % domains.size()];
    }
  }
}

}  // namespace

Result<NumaMode> parse_numa_mode(std::string_view text) {
  static const std::map<std::string, NumaMode, std::less<>> modes{
      {"node", NumaMode::node},
      {"socket", NumaMode::socket},
      {"exclusive", NumaMode::exclusive},
      {"core-complex", NumaMode::core_complex}};
  auto it = modes.find(text);
  if (it == modes.end()) {
    return make_error(ErrorCode::usage, "numa binding " + util::quoted(text) +
                                            ": expected node, socket, exclusive or core-complex");
  }
  return it->second;
}

Result<BindingPlan> plan_numa_binding(const Topology& topo, NumaMode mode,
                                      const std::vector<std::optional<int>>& gpu_nodes, int nproc) {
  const View v = make_view(topo);
  if (v.node_allowed.empty() || nproc <= 0) {
    return make_error(ErrorCode::config, "numa binding: the affinity mask " +
                                             util::quoted(render_cpu_list(topo.allowed)) +
                                             " holds no CPU of a known NUMA node");
  }
  const auto nodes = worker_nodes(v, gpu_nodes, nproc);
  BindingPlan plan;
  plan.cpus.resize(nodes.size());
  if (mode == NumaMode::exclusive) {
    plan_exclusive(v, nodes, plan);
  } else if (mode == NumaMode::core_complex) {
    plan_core_complex(v, nodes, plan);
  } else {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      plan.cpus[i] =
          mode == NumaMode::node ? v.node_allowed.at(nodes[i]) : socket_cpus(v, nodes[i]);
    }
  }
  return plan;
}

std::string render_cpu_list(const std::vector<int>& cpus) { return util::render_ranges(cpus); }

}  // namespace ddprun::host
