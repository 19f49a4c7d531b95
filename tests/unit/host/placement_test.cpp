// GPU counting and device lookup for --nproc-per-node/--pin-gpus, the small-mask warning, and
// --numa-binding plans on fake topologies.

#include "ddprun/host/cpus.hpp"
#include "ddprun/host/gpus.hpp"
#include "ddprun/host/topology.hpp"

#include <gtest/gtest.h>

namespace ddprun::host {
namespace {

using Cpus = std::vector<int>;
using Nodes = std::vector<std::optional<int>>;

TEST(GpuCount, VisibleDevicesBeatNvml) {
  EXPECT_EQ(decide_gpu_count(std::string("0,1"), 8), (GpuCount{2, "CUDA_VISIBLE_DEVICES"}));
  EXPECT_EQ(decide_gpu_count(std::string(""), 8), (GpuCount{0, "CUDA_VISIBLE_DEVICES"}));
  EXPECT_EQ(decide_gpu_count(std::nullopt, 8), (GpuCount{8, "NVML"}));
  EXPECT_EQ(decide_gpu_count(std::nullopt, std::nullopt), (GpuCount{0, "no NVML"}));
}

TEST(DeviceForLocalRank, TakesTheNthVisibleEntryOrTheRankItself) {
  EXPECT_EQ(device_for_local_rank(std::nullopt, 3), "3");
  EXPECT_EQ(device_for_local_rank(std::string("4,6,GPU-ab"), 1), "6");
  EXPECT_EQ(device_for_local_rank(std::string("4,6,GPU-ab"), 2), "GPU-ab");
  EXPECT_EQ(device_for_local_rank(std::string("4,6"), 2), std::nullopt);
  EXPECT_EQ(device_for_local_rank(std::string(""), 0), std::nullopt);
  EXPECT_EQ(device_for_local_rank(std::nullopt, -1), std::nullopt);
}

TEST(VirtualDeviceForLocalRank, FollowsTorchsSplitAndStrip) {
  EXPECT_EQ(virtual_device_for_local_rank(std::nullopt, 3), "3");
  EXPECT_EQ(virtual_device_for_local_rank(std::string("4, GPU-ab ,MIG-cd"), 1), "GPU-ab");
  EXPECT_EQ(virtual_device_for_local_rank(std::string("4, GPU-ab ,MIG-cd"), 2), "MIG-cd");
  // torch splits on commas as written: no CUDA-style stop at an invalid entry.
  EXPECT_EQ(virtual_device_for_local_rank(std::string("0,-1,2"), 2), "2");
  EXPECT_EQ(virtual_device_for_local_rank(std::string(""), 0), "");
  EXPECT_EQ(virtual_device_for_local_rank(std::string(""), 1), std::nullopt);
  EXPECT_EQ(virtual_device_for_local_rank(std::string("4,6"), 2), std::nullopt);
  EXPECT_EQ(virtual_device_for_local_rank(std::nullopt, -1), std::nullopt);
}

TEST(PciBusIdOf, IndexOrUuidPrefix) {
  const std::vector<GpuDevice> devs{
      {"GPU-aaaa-1", "0000:1b:00.0"}, {"GPU-aaab-2", "0000:3b:00.0"}, {"GPU-cccc-3", ""}};
  EXPECT_EQ(pci_bus_id_of("1", devs), "0000:3b:00.0");
  EXPECT_EQ(pci_bus_id_of("GPU-aaab", devs), "0000:3b:00.0");
  EXPECT_EQ(pci_bus_id_of("GPU-aaa", devs), std::nullopt);  // ambiguous prefix
  EXPECT_EQ(pci_bus_id_of("3", devs), std::nullopt);
  EXPECT_EQ(pci_bus_id_of("2", devs), std::nullopt);  // NVML gave no bus id
  EXPECT_EQ(pci_bus_id_of("MIG-1234", devs), std::nullopt);
}

TEST(NvmlIndexOf, IndexOrUniqueUuidPrefix) {
  const std::vector<GpuDevice> devs{{"GPU-aaaa-1", ""}, {"GPU-aaab-2", ""}, {"GPU-cccc-3", ""}};
  EXPECT_EQ(nvml_index_of("2", devs), 2U);  // a device without a bus id still has an index
  EXPECT_EQ(nvml_index_of("GPU-aaab", devs), 1U);
  EXPECT_EQ(nvml_index_of("GPU-aaa", devs), std::nullopt);
  EXPECT_EQ(nvml_index_of("3", devs), std::nullopt);
  EXPECT_EQ(nvml_index_of("MIG-1234", devs), std::nullopt);
}

TEST(GpusInUse, PinnedDevicesElseTheInheritedListElseEveryDevice) {
  const std::vector<GpuDevice> devs{{"GPU-a", ""}, {"GPU-b", ""}, {"GPU-c", ""}, {"GPU-d", ""}};
  using Pinned = std::vector<std::optional<std::string>>;
  EXPECT_EQ(gpus_in_use(Pinned(2), std::nullopt, devs), (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(gpus_in_use(Pinned(2), std::string("3,GPU-b,MIG-x"), devs),
            (std::vector<std::size_t>{1, 3}));
  EXPECT_EQ(gpus_in_use(Pinned{"2", "GPU-a"}, std::nullopt, devs),
            (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(gpus_in_use(Pinned{"2", std::nullopt}, std::string("1"), devs),
            (std::vector<std::size_t>{1, 2}));
  EXPECT_TRUE(gpus_in_use(Pinned(2), std::string(""), devs).empty());  // no GPU at all
  EXPECT_TRUE(gpus_in_use(Pinned(2), std::nullopt, {}).empty());
}

TEST(SmallCpuMask, WarnsOnlyWhenWorkersOutnumberCpus) {
  EXPECT_EQ(small_cpu_mask_warning(4, 4, ""), std::nullopt);
  auto line = small_cpu_mask_warning(2, 8, "");
  ASSERT_TRUE(line);
  EXPECT_EQ(*line,
            "only 2 CPU(s) in the inherited affinity mask for 8 workers; they will share them");
  EXPECT_NE(small_cpu_mask_warning(2, 8, "slurm")->find("--cpus-per-task"), std::string::npos);
}

TEST(CpuListRender, CollapsesRuns) {
  EXPECT_EQ(render_cpu_list({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_EQ(render_cpu_list({3, 1, 2}), "1-3");
  EXPECT_EQ(render_cpu_list({}), "");
}

TEST(NumaMode, ParsesTorchrunWords) {
  EXPECT_EQ(*parse_numa_mode("core-complex"), NumaMode::core_complex);
  EXPECT_FALSE(parse_numa_mode("numa"));
}

/// Two sockets, one NUMA node each, 4 cores per socket with 2 hyperthreads (cpu c and c+8),
/// one L3 per pair of cores: node 0 = 0-3,8-11, node 1 = 4-7,12-15.
Topology two_socket() {
  Topology t;
  for (int c = 0; c < 16; ++c) {
    t.allowed.push_back(c);
    t.package_of[c] = (c % 8) / 4;
    t.core_of[c] = c % 4;
  }
  t.node_cpus = {{0, {0, 1, 2, 3, 8, 9, 10, 11}}, {1, {4, 5, 6, 7, 12, 13, 14, 15}}};
  t.l3_domains = {{0, 1, 8, 9}, {2, 3, 10, 11}, {4, 5, 12, 13}, {6, 7, 14, 15}};
  return t;
}

/// This CI machine's shape: one node, two CPUs, two cores, one L3.
Topology small_vm() {
  Topology t;
  t.allowed = {0, 1};
  t.node_cpus = {{0, {0, 1}}};
  t.package_of = {{0, 0}, {1, 0}};
  t.core_of = {{0, 0}, {1, 1}};
  t.l3_domains = {{0, 1}};
  return t;
}

struct Row {
  const char* name;
  Topology topo;
  NumaMode mode;
  Nodes gpu_nodes;
  int nproc;
  std::vector<Cpus> want;
  std::size_t notes;
};

TEST(NumaPlan, Table) {
  auto masked = two_socket();
  masked.allowed = {0, 1, 8, 9, 4, 12};  // a Slurm step that got part of each socket
  auto ht_only = small_vm();
  ht_only.core_of = {{0, 0}, {1, 0}};  // one core, two hyperthreads
  auto no_l3 = small_vm();
  no_l3.l3_domains.clear();
  const std::vector<Row> rows{
      {"node follows the GPU",
       two_socket(),
       NumaMode::node,
       {1, 0},
       2,
       {{4, 5, 6, 7, 12, 13, 14, 15}, {0, 1, 2, 3, 8, 9, 10, 11}},
       0},
      {"node round-robin without GPU info",
       two_socket(),
       NumaMode::node,
       {},
       3,
       {{0, 1, 2, 3, 8, 9, 10, 11}, {4, 5, 6, 7, 12, 13, 14, 15}, {0, 1, 2, 3, 8, 9, 10, 11}},
       0},
      {"node stays inside the mask", masked, NumaMode::node, {0, 1}, 2, {{0, 1, 8, 9}, {4, 12}}, 0},
      {"socket", two_socket(), NumaMode::socket, {1}, 1, {{4, 5, 6, 7, 12, 13, 14, 15}}, 0},
      {"exclusive splits physical cores",
       two_socket(),
       NumaMode::exclusive,
       {0, 0, 0, 1},
       4,
       {{0, 8, 1, 9}, {2, 10}, {3, 11}, {4, 12, 5, 13, 6, 14, 7, 15}},
       0},
      {"exclusive on the small VM", small_vm(), NumaMode::exclusive, {}, 2, {{0}, {1}}, 0},
      {"exclusive falls back to logical CPUs", ht_only, NumaMode::exclusive, {}, 2, {{0}, {1}}, 1},
      {"exclusive shares when CPUs run out",
       small_vm(),
       NumaMode::exclusive,
       {},
       3,
       {{0}, {1}, {0}},
       1},
      {"core-complex one L3 each",
       two_socket(),
       NumaMode::core_complex,
       {0, 0, 1},
       3,
       {{0, 1, 8, 9}, {2, 3, 10, 11}, {4, 5, 12, 13}},
       0},
      {"core-complex shares when short",
       small_vm(),
       NumaMode::core_complex,
       {},
       2,
       {{0, 1}, {0, 1}},
       1},
      {"core-complex without L3 info", no_l3, NumaMode::core_complex, {}, 1, {{0, 1}}, 1},
      {"unknown GPU node is ignored", small_vm(), NumaMode::node, {7}, 1, {{0, 1}}, 0},
  };
  for (const auto& r : rows) {
    auto plan = plan_numa_binding(r.topo, r.mode, r.gpu_nodes, r.nproc);
    ASSERT_TRUE(plan) << r.name << ": " << plan.error().message;
    EXPECT_EQ(plan->cpus, r.want) << r.name;
    EXPECT_EQ(plan->notes.size(), r.notes) << r.name;
  }
}

TEST(NumaPlan, MaskOutsideEveryNodeIsAnError) {
  auto t = small_vm();
  t.allowed = {5};
  auto plan = plan_numa_binding(t, NumaMode::node, {}, 1);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message.find("'5'"), std::string::npos) << plan.error().message;
}

}  // namespace
}  // namespace ddprun::host
