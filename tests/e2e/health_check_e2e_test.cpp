// Node health checks before every round (--health-check, --gpu-memory-wait; issue #27): an
// unhealthy node does not join, withdraws and exits with status 3 naming why, and the others
// go on without it. Not the TORCHELASTIC_HEALTH_CHECK_PORT endpoint (health_e2e_test.cpp).
// Every wait is bounded; nothing asserts how long anything took.

#include <gtest/gtest.h>

#include <signal.h>

#include <fstream>
#include <string>
#include <vector>

#include "exclusion_scenario.hpp"
#include "multinode_agents.hpp"

using namespace ddprun::test;
using namespace ddprun::test::multinode;

namespace {

/// A one-node job of `worker` (a shell command) with `flags`, under a clean environment plus
/// `env` ("NAME=value"), logging at INFO.
RunResult run_single(const std::vector<std::string>& flags, const std::string& worker,
                     const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv{"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=/root"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv = concat(argv, {ddprun_bin(), "--log_level", "INFO", "--standalone", "--nproc_per_node", "1",
                       "--monitor_interval", "0.1"});
  argv = concat(argv, flags);
  argv = concat(argv, {"--no_python", "/bin/sh", "-c", worker});
  return run(argv, RunOptions{{}, {}, "", std::chrono::seconds(90)});
}

bool process_exists(const std::string& pid_text) {
  return !pid_text.empty() && ::kill(std::stoi(pid_text), 0) == 0;
}

TEST(HealthCheckE2E, SingleNodeWhoseCheckFailsExitsThreeWithTheCheckOutputAsTheReason) {
  const auto dir = make_temp_dir("ddprun-hc-");
  auto r = run_single({"--health-check", "echo probing GPUs; echo 'GPU 3: ECC errors' >&2; exit 4",
                       "--events-file", dir + "/events.jsonl"},
                      "touch " + dir + "/ran");
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_TRUE(contains(r.err, "health check output: probing GPUs")) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "this node is unhealthy: health check failed: GPU 3: ECC errors "
                       "(exit status 4); this agent exits with status 3"))
      << r.err;
  EXPECT_FALSE(contains(read_file(dir + "/events.jsonl"), "\"event\":\"workers_started\""));
  const auto events = read_file(dir + "/events.jsonl");
  EXPECT_TRUE(contains(events,
                       "\"event\":\"unhealthy\",\"reason\":\"health check failed: GPU 3: "
                       "ECC errors (exit status 4)\",\"lines\":[\"probing GPUs\",\"GPU "
                       "3: ECC errors\"]"))
      << events;
  EXPECT_TRUE(contains(events, "\"state\":\"EXCLUDED\",\"exit_code\":3")) << events;
  EXPECT_TRUE(read_file(dir + "/ran").empty());
}

TEST(HealthCheckE2E, PassingCheckRunsBeforeEveryRound) {
  const auto dir = make_temp_dir("ddprun-hc-");
  const auto count = dir + "/checks";
  auto r = run_single({"--health-check", "echo x >> " + count, "--max_restarts", "1"},
                      "[ \"$TORCHELASTIC_RESTART_COUNT\" = 1 ] || exit 1");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(count), "x\nx\n");
  EXPECT_TRUE(contains(r.err, "health check passed")) << r.err;
}

TEST(HealthCheckE2E, HangingCheckTimesOutAndLeavesNoProcessBehind) {
  const auto dir = make_temp_dir("ddprun-hc-");
  const auto pid_file = dir + "/child.pid";
  auto r = run_single(
      {"--health-check", "sleep 300 & echo $! > " + pid_file + "; echo still probing; sleep 300",
       "--health-check-timeout", "1"},
      "true");
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "health check failed: still probing (timed out after 1 s "
                       "(--health-check-timeout))"))
      << r.err;
  std::string pid;
  std::ifstream(pid_file) >> pid;
  ASSERT_FALSE(pid.empty()) << "the check did not start its background child";
  EXPECT_TRUE(eventually([&] { return !process_exists(pid); }, std::chrono::seconds(10)))
      << "the check's background child " << pid << " outlived the agent";
}

TEST(HealthCheckE2E, FailingCheckWhileWorkersRunFailsTheGroupAndTheNodeWithdraws) {
  const auto dir = make_temp_dir("ddprun-hc-");
  const auto sick = dir + "/sick";
  auto r = run_single(
      {"--health-check", "if [ -e " + sick + " ]; then echo 'GPU fell off the bus'; exit 1; fi",
       "--health-check-interval", "0.2", "--max_restarts", "3", "--events-file",
       dir + "/events.jsonl"},
      "sleep 120 & echo $! > " + dir + "/worker.pid; touch " + sick + "; wait");
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "health check failed: GPU fell off the bus (exit status 1): "
                       "stopping the worker group"))
      << r.err;
  std::string pid;
  std::ifstream(dir + "/worker.pid") >> pid;
  ASSERT_FALSE(pid.empty()) << "the worker did not start its child";
  EXPECT_TRUE(eventually([&] { return !process_exists(pid); }, std::chrono::seconds(10)))
      << "the worker's child " << pid << " was not stopped";
  const auto events = read_file(dir + "/events.jsonl");
  EXPECT_EQ(events.find("\"event\":\"restart\""), std::string::npos) << events;
  EXPECT_TRUE(contains(events, "\"event\":\"unhealthy\"")) << events;
}

/// The fake NVML (one GPU) reads its used memory from `memory_file`; the first attempt's worker
/// writes `memory` there ("4096 2": 4096 MiB, freed 2 s later) and fails, the second succeeds.
RunResult run_with_busy_gpu(const std::string& memory, const std::vector<std::string>& flags) {
  const auto dir = make_temp_dir("ddprun-hc-");
  const auto memory_file = dir + "/memory";
  const std::string worker = "if [ \"$TORCHELASTIC_RESTART_COUNT\" = 0 ]; then echo '" + memory +
                             "' > " + memory_file + "; exit 1; fi";
  return run_single(concat({"--max_restarts", "1"}, flags), worker,
                    {std::string("LD_LIBRARY_PATH=") + DDPRUN_FAKE_NVML_DIR, "FAKE_NVML_GPUS=1",
                     "FAKE_NVML_MEMORY_FILE=" + memory_file});
}

TEST(HealthCheckE2E, RestartWaitsForTheGpuMemoryToBeFreed) {
  auto r = run_with_busy_gpu("4096 2", {});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "for the GPUs' memory to fall under 512 MiB: GPU 0 (GPU-fake-0) "
                       "had 4096 MiB used"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "attempt 2 of 2")) << r.err;
}

TEST(HealthCheckE2E, GpuMemoryThatIsNeverFreedMakesTheNodeUnhealthy) {
  auto r = run_with_busy_gpu("4096", {"--gpu-memory-wait", "1", "--gpu-memory-tolerance", "1024"});
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "this node is unhealthy: GPU memory not freed: GPU 0 (GPU-fake-0) "
                       "still has 4096 MiB used after 1 s (--gpu-memory-wait; tolerance "
                       "1024 MiB)"))
      << r.err;
  EXPECT_FALSE(contains(r.err, "attempt 2 of 2")) << r.err;
}

TEST(HealthCheckE2E, NoNvmlMeansNoGpuMemoryWait) {
  auto r = run_single({"--max_restarts", "1"}, "[ \"$TORCHELASTIC_RESTART_COUNT\" = 1 ] || exit 1",
                      {"LD_LIBRARY_PATH=/nonexistent"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(contains(r.err, "GPU memory")) << r.err;
}

TEST(HealthCheckE2E, C10dNodeWhoseCheckFailsIsLeftOutAndTheOtherFinishesAlone) {
  const int port = free_port();
  expect_unhealthy_node_left_out(
      [port](std::size_t i) {
        return c10d_flags("1:2", port, 1, loopback(static_cast<int>(i)), k_fast_conf);
      },
      Arrival::agent0_hosts);
}

}  // namespace
