// --numa-binding, --omp-threads and --pin-gpus through the ddprun binary: each worker reports
// its own Cpus_allowed_list, OMP_NUM_THREADS and CUDA_VISIBLE_DEVICES.

#include "ddprun/host/cpus.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "support/subprocess.hpp"

using namespace ddprun::test;

namespace {

using Place = std::map<std::string, std::string>;

Place read_place(const std::string& dir, int local_rank) {
  Place out;
  std::istringstream in(read_file(dir + "/place_" + std::to_string(local_rank) + ".txt"));
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) {
      out[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  return out;
}

/// ddprun under `env -i` with `extra` variables, two workers running placement.sh.
RunResult run_placed(const std::vector<std::string>& flags, const std::string& dir,
                     const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv{"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "LOGLEVEL=INFO"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back(ddprun_bin());
  argv.push_back("--standalone");
  argv.insert(argv.end(), flags.begin(), flags.end());
  for (const auto& tail :
       {std::string("--no_python"), source_path("tests/support/workers/placement.sh"), dir}) {
    argv.push_back(tail);
  }
  return run(argv, RunOptions{{}, {}, "", std::chrono::seconds(60)});
}

std::vector<int> cpus_of(const Place& p) {
  auto cpus = ddprun::host::parse_cpu_list(p.at("cpus"));
  return cpus ? *cpus : std::vector<int>{};
}

std::vector<int> my_cpus() {
  auto text = read_file("/proc/self/status");
  auto at = text.find("Cpus_allowed_list:");
  auto end = text.find('\n', at);
  auto cpus = ddprun::host::parse_cpu_list(text.substr(at + 18, end - at - 18));
  return cpus ? *cpus : std::vector<int>{};
}

}  // namespace

TEST(PlacementE2E, ExclusiveGivesEachWorkerItsOwnCpus) {
  const auto mask = my_cpus();
  if (mask.size() < 2) {
    GTEST_SKIP() << "needs at least 2 CPUs in the test's affinity mask";
  }
  auto dir = make_temp_dir("ddprun-place-");
  auto r = run_placed({"--nproc_per_node=2", "--numa-binding=exclusive"}, dir);
  ASSERT_EQ(r.status, 0) << r.err;
  auto a = cpus_of(read_place(dir, 0));
  auto b = cpus_of(read_place(dir, 1));
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  std::set<int> both(a.begin(), a.end());
  for (int c : b) {
    EXPECT_TRUE(both.insert(c).second) << "CPU " << c << " given to both workers";
  }
  if (mask.size() == 2) {
    EXPECT_EQ(a.size(), 1u);  // this CI machine: one CPU each
    EXPECT_EQ(b.size(), 1u);
  }
  EXPECT_NE(r.err.find("local rank 1: CPUs "), std::string::npos) << r.err;
}

TEST(PlacementE2E, NodeModeOnOneNodeGivesEveryWorkerTheWholeNode) {
  const auto mask = my_cpus();
  auto dir = make_temp_dir("ddprun-place-");
  auto r = run_placed({"--nproc_per_node=2", "--numa_binding", "node"}, dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const bool one_node =
      read_file("/sys/devices/system/node/online").find_first_of(",-") == std::string::npos;
  for (int lr = 0; lr < 2; ++lr) {
    auto cpus = cpus_of(read_place(dir, lr));
    ASSERT_FALSE(cpus.empty());
    if (one_node) {
      EXPECT_EQ(cpus, mask) << "local rank " << lr;
    }
  }
}

TEST(PlacementE2E, OmpThreadsCpusAndUserValue) {
  const auto per = std::max<std::size_t>(1, my_cpus().size() / 2);
  auto dir = make_temp_dir("ddprun-place-");
  auto r = run_placed({"--nproc_per_node=2", "--omp-threads=cpus"}, dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_place(dir, 1).at("omp"), std::to_string(per));
  EXPECT_NE(r.err.find("Setting OMP_NUM_THREADS=" + std::to_string(per)), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("*****"), std::string::npos) << "no torchrun banner in cpus mode";
  auto kept = run_placed({"--nproc_per_node=2", "--omp-threads=7"}, dir, {"OMP_NUM_THREADS=3"});
  ASSERT_EQ(kept.status, 0) << kept.err;
  EXPECT_EQ(read_place(dir, 0).at("omp"), "3");
  EXPECT_NE(kept.err.find("--omp-threads is ignored"), std::string::npos) << kept.err;
}

TEST(PlacementE2E, PinGpusGivesEachWorkerOneVisibleEntry) {
  auto dir = make_temp_dir("ddprun-place-");
  auto r =
      run_placed({"--nproc_per_node=gpu", "--pin-gpus"}, dir, {"CUDA_VISIBLE_DEVICES=5,GPU-abc"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_place(dir, 0).at("cvd"), "5");
  EXPECT_EQ(read_place(dir, 1).at("cvd"), "GPU-abc");
  EXPECT_NE(r.err.find("Using nproc_per_node=2 (gpu: CUDA_VISIBLE_DEVICES)"), std::string::npos)
      << r.err;
}

TEST(PlacementE2E, VirtualLocalRankGivesLocalRankZeroAndOneDevice) {
  auto dir = make_temp_dir("ddprun-place-");
  auto r = run_placed({"--nproc_per_node=2", "--virtual-local-rank"}, dir,
                      {"CUDA_VISIBLE_DEVICES=MIG-a1, 3"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_place(dir, 0).at("cvd"), "MIG-a1");
  EXPECT_EQ(read_place(dir, 1).at("cvd"), "3");
  EXPECT_EQ(read_place(dir, 0).at("lr"), "0");
  EXPECT_EQ(read_place(dir, 1).at("lr"), "0");
  EXPECT_NE(r.err.find("local rank 1: CUDA_VISIBLE_DEVICES=3, LOCAL_RANK=0"), std::string::npos)
      << r.err;
  // Unset: the local rank itself, through PET_VIRTUAL_LOCAL_RANK; the log prefix keeps the
  // real local rank.
  auto unset = run_placed({"--nproc_per_node=2", "--tee=3"}, dir, {"PET_VIRTUAL_LOCAL_RANK=1"});
  ASSERT_EQ(unset.status, 0) << unset.err;
  EXPECT_EQ(read_place(dir, 1).at("cvd"), "1");
  EXPECT_EQ(read_place(dir, 1).at("lr"), "0");
}

TEST(PlacementE2E, VirtualLocalRankWithTooFewDevicesStopsBeforeSpawning) {
  auto dir = make_temp_dir("ddprun-place-");
  auto r = run_placed({"--nproc_per_node=3", "--virtual-local-rank"}, dir,
                      {"CUDA_VISIBLE_DEVICES=GPU-x,GPU-y"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--virtual-local-rank: CUDA_VISIBLE_DEVICES='GPU-x,GPU-y' has no entry for "
                       "local rank 2"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/place_0.txt"));
}

TEST(PlacementE2E, AutoWithoutGpusFallsBackToTheCpuCount) {
  auto dir = make_temp_dir("ddprun-place-");
  auto r = run_placed({"--nproc_per_node=auto", "--print-config"}, dir);
  ASSERT_EQ(r.status, 0) << r.err;
  // No NVML on a GPU-less machine; with a GPU the count comes from NVML instead.
  const bool has_nvml = r.out.find("gpu: NVML") != std::string::npos;
  const std::regex line("nproc_per_node +=  ?([0-9]+) ");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, line)) << r.out;
  if (!has_nvml) {
    EXPECT_EQ(m[1].str(), std::to_string(my_cpus().size())) << r.out;
    EXPECT_NE(r.out.find("auto: no GPU (no NVML), cpu: affinity mask"), std::string::npos) << r.out;
  }
}

namespace {

/// --print-config under the fake NVML library (tests/support/fake_nvml).
RunResult run_fake_nvml(const std::vector<std::string>& flags,
                        const std::vector<std::string>& fake_env) {
  std::vector<std::string> argv{"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "LOGLEVEL=INFO",
                                std::string("LD_LIBRARY_PATH=") + DDPRUN_FAKE_NVML_DIR};
  argv.insert(argv.end(), fake_env.begin(), fake_env.end());
  argv.push_back(ddprun_bin());
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("train.py");
  return run(argv, RunOptions{{}, {}, "", std::chrono::seconds(60)});
}

}  // namespace

TEST(PlacementE2E, GpuCountComesFromNvmlWithoutVisibleDevices) {
  auto r = run_fake_nvml({"--nproc_per_node=gpu", "--print-config"}, {"FAKE_NVML_GPUS=3"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("nproc_per_node +=  ?3 .*gpu: NVML"))) << r.out;
}

TEST(PlacementE2E, FailingNvmlInitMeansNoGpu) {
  auto autod = run_fake_nvml({"--nproc_per_node=auto", "--print-config"}, {"FAKE_NVML_INIT_RC=9"});
  ASSERT_EQ(autod.status, 0) << autod.err;
  EXPECT_NE(autod.out.find("auto: no GPU (no NVML), cpu: affinity mask"), std::string::npos)
      << autod.out;
  auto gpu = run_fake_nvml({"--nproc_per_node=gpu", "--print-config"}, {"FAKE_NVML_INIT_RC=9"});
  EXPECT_EQ(gpu.status, 2);
  EXPECT_NE(gpu.err.find("none is: no NVML"), std::string::npos) << gpu.err;
}
