// read_topology and read_pci_numa_node against a fake sysfs tree in a temp directory, and
// once against this machine's real /sys.

#include "ddprun/host/topology.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

namespace ddprun::host {
namespace {

namespace fs = std::filesystem;

class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("ddprun_sysfs_" + std::to_string(std::random_device{}()));
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& text) {
    const auto path = root_ / rel;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text << "\n";
  }
  /// cpu `c`: package, core, and the L3 list at cache/index3 (index0-2 are lower levels).
  void cpu(int c, int package, int core, const std::string& l3) {
    const std::string dir = "devices/system/cpu/cpu" + std::to_string(c);
    write(dir + "/topology/physical_package_id", std::to_string(package));
    write(dir + "/topology/core_id", std::to_string(core));
    write(dir + "/cache/index2/level", "2");
    write(dir + "/cache/index2/shared_cpu_list", std::to_string(c));
    write(dir + "/cache/index3/level", "3");
    write(dir + "/cache/index3/shared_cpu_list", l3);
  }
  fs::path root_;
};

TEST_F(FakeSysfs, ReadsNodesCoresAndL3Domains) {
  write("devices/system/node/node0/cpulist", "0-1");
  write("devices/system/node/node1/cpulist", "2-3");
  write("devices/system/node/possible", "0-1");
  for (int c = 0; c < 4; ++c) {
    cpu(c, c / 2, c % 2, c < 2 ? "0-1" : "2-3");
  }
  auto t = read_topology(root_.string(), {0, 1, 2, 3});
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->node_cpus, (std::map<int, std::vector<int>>{{0, {0, 1}}, {1, {2, 3}}}));
  EXPECT_EQ(t->package_of.at(3), 1);
  EXPECT_EQ(t->core_of.at(3), 1);
  EXPECT_EQ(t->l3_domains, (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
}

TEST_F(FakeSysfs, NoNumaDirectoryMeansOneNodeOfTheMask) {
  cpu(5, 0, 0, "5");
  auto t = read_topology(root_.string(), {5});
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->node_cpus, (std::map<int, std::vector<int>>{{0, {5}}}));
}

TEST_F(FakeSysfs, MalformedCpulistNamesTheFile) {
  write("devices/system/node/node0/cpulist", "0-x");
  auto t = read_topology(root_.string(), {0});
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("node0/cpulist"), std::string::npos) << t.error().message;
}

TEST_F(FakeSysfs, PciNumaNode) {
  write("bus/pci/devices/0000:3b:00.0/numa_node", "1");
  write("bus/pci/devices/0000:5e:00.0/numa_node", "-1");
  EXPECT_EQ(read_pci_numa_node(root_.string(), "0000:3b:00.0"), 1);
  EXPECT_EQ(read_pci_numa_node(root_.string(), "0000:5e:00.0"), std::nullopt);
  EXPECT_EQ(read_pci_numa_node(root_.string(), "0000:00:00.0"), std::nullopt);
}

TEST(RealSysfs, EveryAllowedCpuIsInSomeNode) {
  std::vector<int> allowed{0};
  auto t = read_topology("/sys", allowed);
  ASSERT_TRUE(t) << t.error().message;
  bool found = false;
  for (const auto& [node, cpus] : t->node_cpus) {
    found = found || std::find(cpus.begin(), cpus.end(), 0) != cpus.end();
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace ddprun::host
