// Fan-out end to end: ddprun run once in a fake two-node PBS job script starts itself on both
// "nodes" through tests/support/fake_pbsdsh/pbsdsh (which runs the command here from a bare
// environment, as TM does), or in a fake Slurm batch script through tests/support/fake_srun/srun
// (a one-node step with the caller's environment). The nodes are 127.0.0.2 and 127.0.0.3:
// loopback addresses that need no name resolution.

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "support/subprocess.hpp"

using namespace ddprun::test;

namespace {

constexpr auto k_timeout = std::chrono::seconds(90);
constexpr auto k_gone_timeout = std::chrono::seconds(20);
constexpr const char* k_mark = "a b'c $HOME";

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

class FanoutE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir("ddprun-fanout-");
    std::ofstream(dir_ + "/nodefile") << "127.0.0.2\n127.0.0.2\n127.0.0.3\n127.0.0.3\n";
  }

  /// The job script's environment on the mother superior: task 1 on node 0.
  std::map<std::string, std::string> job_env(const std::string& tag) const {
    const char* path = std::getenv("PATH");
    auto eq = tag.find('=');
    return {
        {"PATH", source_path("tests/support/fake_pbsdsh") + ":" + (path ? path : "/usr/bin:/bin")},
        {"PBS_JOBID", "4242.fake-pbs"},
        {"PBS_NODEFILE", dir_ + "/nodefile"},
        {"PBS_NODENUM", "0"},
        {"PBS_TASKNUM", "1"},
        {"FANOUT_MARK", k_mark},
        {tag.substr(0, eq), tag.substr(eq + 1)}};
  }

  /// A Slurm batch script's environment on the first node: the job view, no step.
  std::map<std::string, std::string> batch_env(const std::string& tag) const {
    const char* path = std::getenv("PATH");
    auto eq = tag.find('=');
    return {
        {"PATH", source_path("tests/support/fake_srun") + ":" + (path ? path : "/usr/bin:/bin")},
        {"SLURM_JOB_ID", "4243"},
        {"SLURM_JOB_NODELIST", "127.0.0.2,127.0.0.3"},
        {"SLURM_JOB_NUM_NODES", "2"},
        {"SLURMD_NODENAME", "127.0.0.2"},
        {"FANOUT_MARK", k_mark},
        {tag.substr(0, eq), tag.substr(eq + 1)}};
  }

  RunResult run_job(const std::string& worker_script, const std::string& tag) {
    return run(
        {ddprun_bin(), "--nproc_per_node", "1", "--no_python", "/bin/sh", "-c", worker_script},
        RunOptions{job_env(tag), {}, dir_, k_timeout});
  }

  std::string dir_;
};

}  // namespace

TEST_F(FanoutE2E, OneDdprunInAPbsJobScriptRunsEveryNode) {
  auto tag = unique_tag();
  auto r = run_job("env | sort > \"$PWD/env_$RANK.txt\" && echo hello from rank $RANK", tag);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "[127.0.0.2] hello from rank 0")) << r.out;
  EXPECT_TRUE(has(r.out, "[127.0.0.3] hello from rank 1")) << r.out;
  for (int rank = 0; rank < 2; ++rank) {
    auto env = parse_env_file(dir_ + "/env_" + std::to_string(rank) + ".txt");
    EXPECT_EQ(env["RANK"], std::to_string(rank));
    EXPECT_EQ(env["GROUP_RANK"], std::to_string(rank));
    EXPECT_EQ(env["WORLD_SIZE"], "2");
    EXPECT_EQ(env["MASTER_ADDR"], "127.0.0.2");
    EXPECT_EQ(env["FANOUT_MARK"], k_mark) << "the job script's environment reaches each node";
    EXPECT_EQ(env["PBS_NODENUM"], std::to_string(rank));
  }
}

TEST_F(FanoutE2E, OneDdprunInASlurmBatchScriptRunsEveryNode) {
  // The batch script's job view has the hosts but no node count: resolve() gets the whole job's
  // (fanout::whole_job_view), and every node the head host, port and run id it resolved.
  auto tag = unique_tag();
  auto r = run({ddprun_bin(), "--nproc_per_node", "1", "--no_python", "/bin/sh", "-c",
                "env | sort > \"$PWD/env_$RANK.txt\" && echo hello from rank $RANK"},
               RunOptions{batch_env(tag), {}, dir_, k_timeout});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out + r.err, "through srun")) << r.err;
  EXPECT_TRUE(has(r.out, "[127.0.0.2] hello from rank 0")) << r.out;
  EXPECT_TRUE(has(r.out, "[127.0.0.3] hello from rank 1")) << r.out;
  for (int rank = 0; rank < 2; ++rank) {
    auto env = parse_env_file(dir_ + "/env_" + std::to_string(rank) + ".txt");
    EXPECT_EQ(env["RANK"], std::to_string(rank));
    EXPECT_EQ(env["WORLD_SIZE"], "2");
    EXPECT_EQ(env["MASTER_ADDR"], "127.0.0.2");
    EXPECT_EQ(env["TORCHELASTIC_RUN_ID"], "4243.batch");
    EXPECT_EQ(env["FANOUT_MARK"], k_mark);
  }
}

TEST_F(FanoutE2E, OneFailingNodeStopsTheOthersAndIsNamed) {
  auto tag = unique_tag();
  auto r = run_job("if [ \"$RANK\" = 1 ]; then exit 3; fi; exec sleep 300", tag);
  EXPECT_FALSE(r.timed_out);
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(has(r.err, "ddprun: node 127.0.0.3 (node_rank 1) failed with exit code")) << r.err;
  EXPECT_TRUE(has(r.err, "stopping the other 1 node(s)")) << r.err;
  EXPECT_TRUE(eventually([&] { return processes_with_env(tag).empty(); }, k_gone_timeout));
}

TEST_F(FanoutE2E, SigtermToTheJobScriptsDdprunStopsEveryNode) {
  auto tag = unique_tag();
  auto bg = start({ddprun_bin(), "--nproc_per_node", "1", "--shutdown_timeout", "5", "--no_python",
                   "/bin/sh", "-c", "touch \"$PWD/up_$RANK\" && exec sleep 300"},
                  RunOptions{job_env(tag), {}, dir_, k_timeout});
  ASSERT_GT(bg.pid, 0);
  bool up = eventually(
      [&] { return std::ifstream(dir_ + "/up_0").good() && std::ifstream(dir_ + "/up_1").good(); },
      std::chrono::seconds(60));
  ASSERT_TRUE(up) << read_file(bg.err_path);
  kill(bg.pid, SIGTERM);
  int status = wait_for(bg.pid, std::chrono::seconds(60));
  EXPECT_NE(status, -1) << "the fan-out parent did not exit";
  EXPECT_NE(status, 0);
  EXPECT_TRUE(eventually([&] { return processes_with_env(tag).empty(); }, k_gone_timeout));
}

TEST_F(FanoutE2E, ASignalInSignalsToHandleIsForwardedToEveryNodesAgent) {
  // As `sbatch --signal=B:USR1@N` with `exec ddprun` in the script: only the job script's
  // ddprun gets SIGUSR1, and it forwards it because --signals-to-handle lists it.
  auto tag = unique_tag();
  auto bg = start({ddprun_bin(), "--nproc_per_node", "1", "--shutdown_timeout", "20",
                   "--signals_to_handle=SIGTERM,SIGUSR1", "--no_python",
                   source_path("tests/support/workers/record_signal.sh"), dir_},
                  RunOptions{job_env(tag), {}, dir_, k_timeout});
  ASSERT_GT(bg.pid, 0);
  bool up = eventually(
      [&] {
        return std::ifstream(dir_ + "/ready_0").good() && std::ifstream(dir_ + "/ready_1").good();
      },
      std::chrono::seconds(60));
  ASSERT_TRUE(up) << read_file(bg.err_path);
  kill(bg.pid, SIGUSR1);
  EXPECT_EQ(wait_for(bg.pid, std::chrono::seconds(60)), 128 + SIGUSR1) << read_file(bg.err_path);
  auto err = read_file(bg.err_path);
  EXPECT_FALSE(has(err, "failed with exit code")) << err;
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(read_file(dir_ + "/signal_" + std::to_string(rank)), "USR1\n") << err;
  }
  EXPECT_TRUE(eventually([&] { return processes_with_env(tag).empty(); }, k_gone_timeout));
}
