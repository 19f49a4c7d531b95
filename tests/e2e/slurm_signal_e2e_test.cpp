// Slurm's warning signal before the time limit (`srun --time=1 --signal=USR1@N`), under the real
// Slurm 22.05 of ../shared/slurm-sim, as docs/schedulers.md documents it: Slurm signals every
// process of the step (the agents and their workers); an agent that handles SIGUSR1 forwards it
// and gives the workers the --shutdown-timeout grace to checkpoint, then exits 1 and the job
// ends FAILED before its limit; an agent that does not handle it dies of it and the guardian
// stops the workers. Nothing is left behind either way.
//
// Slurm checks time limits every 30 s and sends the signal at the first check where less than
// N + 30 s remain. With a 60 s limit and N = 10 that is the first check at least 20 s after the
// start (20 to 50 s), late enough for ddprun to be running even on a loaded machine, and early
// enough for the workers to finish before the limit. No timing is asserted.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "e2e/slurm_cluster.hpp"
#include "support/subprocess.hpp"

using namespace ddprun::test;
using namespace ddprun::test::slurmsim;
namespace fs = std::filesystem;

namespace {

constexpr const char* k_limit_and_signal = "--time=1 --signal=USR1@10";
constexpr const char* k_handle_usr1 = "--signals_to_handle=SIGTERM,SIGINT,SIGHUP,SIGQUIT,SIGUSR1";
/// The signal comes 20 to 50 s after the start, the limit kills at 60 to 90 s plus KillWait.
constexpr auto k_job_timeout = std::chrono::seconds(150);
constexpr auto k_gone_timeout = std::chrono::seconds(60);
constexpr auto k_state_timeout = std::chrono::seconds(30);
constexpr int k_ranks = 4;

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

/// Every line of a worker's record that is neither `got_USR1` nor `saved`.
std::string unexpected_lines(const std::string& record) {
  std::istringstream in(record);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (line != "got_USR1" && line != "saved") {
      out += line + "\n";
    }
  }
  return out;
}

struct SignalledJob {
  RunResult srun;
  std::string tag;
};

void expect_every_worker_checkpointed(const std::string& dir, const std::string& log) {
  for (int rank = 0; rank < k_ranks; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    auto record = read_file(dir + "/rank_" + std::to_string(rank));
    // USR1 once or twice (from Slurm and from ddprun; the shell may merge them), then the
    // whole checkpoint: the grace was given and the time limit's SIGTERM never came.
    EXPECT_EQ(record.rfind("got_USR1\n", 0), 0u) << record << log;
    EXPECT_TRUE(record.ends_with("saved\n")) << record << log;
    EXPECT_EQ(unexpected_lines(record), "") << record;
  }
}

/// `srun -N2` of ddprun (2 workers per node) under a 1-minute limit with USR1 10 s before it.
SignalledJob run_job(const std::string& dir, const std::string& ddprun_flags) {
  SignalledJob job{{}, unique_tag()};
  job.srun = slurm("env " + job.tag + " srun -N2 --ntasks-per-node=1 " + k_limit_and_signal + " " +
                       ddprun_bin() + " --nproc_per_node 2 --shutdown_timeout 20 " + ddprun_flags +
                       " --no_python " + worker("checkpointer.sh") + " " + dir,
                   k_job_timeout);
  return job;
}

std::string job_info(const std::string& dir) {
  auto id = read_file(dir + "/ready_0");
  id = id.substr(0, id.find('\n'));
  return id.empty() ? "" : slurm("scontrol show job " + id).out;
}

void expect_job_failed_with(const std::string& dir, const std::string& exit_code) {
  EXPECT_TRUE(eventually([&] { return job_info(dir).find("JobState=FAILED") != std::string::npos; },
                         k_state_timeout))
      << job_info(dir);
  EXPECT_NE(job_info(dir).find("ExitCode=" + exit_code), std::string::npos) << job_info(dir);
}

void expect_nothing_left(const std::string& tag) {
  EXPECT_TRUE(eventually([&] { return processes_with_env(tag).empty(); }, k_gone_timeout))
      << processes_with_env(tag).size() << " processes left";
}

}  // namespace

TEST_F(SlurmE2E, TimeLimitSignalHandledByDdprunLetsEveryWorkerCheckpoint) {
  auto job = run_job(dir_, k_handle_usr1);
  const auto& err = job.srun.err;
  // Each agent exits 138 (128 + SIGUSR1: stopped by a signal before the job ended); srun passes
  // on the highest task status.
  EXPECT_EQ(job.srun.status, 138) << err;
  EXPECT_EQ(count_of(err, "Received SIGUSR1 death signal"), 2u) << err;
  EXPECT_EQ(count_of(err, "closing signal SIGUSR1"), 4u) << err;
  EXPECT_EQ(err.find("forcefully exiting via SIGKILL"), std::string::npos) << err;
  EXPECT_EQ(err.find("guardian"), std::string::npos) << err;
  expect_every_worker_checkpointed(dir_, err);
  expect_job_failed_with(dir_, "138:0");
  expect_nothing_left(job.tag);
}

TEST_F(SlurmE2E, TimeLimitSignalNotHandledKillsTheAgentsAndLeavesNoWorker) {
  auto job = run_job(dir_, "");
  const auto& err = job.srun.err;
  // Default --signals-to-handle: each agent dies of SIGUSR1 (128 + 10), as torchrun does. Its
  // guardian SIGKILLs the workers and says so, but the guardian's line is not asserted: once
  // the agent is gone, slurmstepd may kill the rest of the step (guardian included) first.
  EXPECT_EQ(job.srun.status, 138) << err;
  EXPECT_EQ(err.find("Received SIGUSR1"), std::string::npos) << err;
  for (int rank = 0; rank < k_ranks; ++rank) {
    EXPECT_TRUE(fs::exists(dir_ + "/ready_" + std::to_string(rank))) << err;
    // Slurm signalled the workers too, but the guardian's SIGKILL cut any checkpoint short.
    auto record = read_file(dir_ + "/rank_" + std::to_string(rank));
    EXPECT_EQ(record.find("saved"), std::string::npos) << record;
  }
  expect_job_failed_with(dir_, "0:10");
  expect_nothing_left(job.tag);
}

TEST_F(SlurmE2E, TimeLimitSignalToTheBatchShellReachesEveryNodeThroughTheFanOut) {
  // `--signal=B:USR1@10` signals only the batch script, here ddprun itself (exec), which fans
  // out through srun: it forwards USR1 to each srun, srun to its step.
  auto tag = unique_tag();
  auto script = dir_ + "/job.sh";
  std::ofstream(script) << "#!/bin/bash\nexport " << tag << "\nexec " << ddprun_bin()
                        << " --nproc_per_node 2 --shutdown_timeout 20 " << k_handle_usr1
                        << " --no_python " << worker("checkpointer.sh") << " " << dir_ << "\n";
  auto r = slurm("sbatch --wait -N2 --time=1 --signal=B:USR1@10 -o " + dir_ + "/out.txt " + script,
                 k_job_timeout);
  auto out = read_file(dir_ + "/out.txt");
  EXPECT_EQ(r.status, 138) << r.err << out;  // sbatch --wait: the script's status
  EXPECT_EQ(count_of(out, "Received SIGUSR1 death signal"), 2u) << out;
  EXPECT_EQ(out.find("failed with exit code"), std::string::npos) << out;
  EXPECT_EQ(out.find("forcefully exiting via SIGKILL"), std::string::npos) << out;
  expect_every_worker_checkpointed(dir_, out);
  expect_job_failed_with(dir_, "138:0");
  expect_nothing_left(tag);
}
