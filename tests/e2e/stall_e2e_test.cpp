// End-to-end tests of --stall-timeout: a silent group is found, every rank's stack is
// reported, and the group restarts; a chatty worker never trips it; the console is the same
// as without the flag.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "multinode_agents.hpp"
#include "support/subprocess.hpp"

using namespace ddprun::test;
namespace fs = std::filesystem;
using ddprun::test::multinode::contains;

namespace {

constexpr auto k_timeout = std::chrono::seconds(120);

RunResult run_ddprun(const std::vector<std::string>& args,
                     std::map<std::string, std::string> env = {}) {
  std::vector<std::string> argv{ddprun_bin(), "--nproc-per-node", "2"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, RunOptions{std::move(env), {}, "", k_timeout});
}

/// attempt_<n>/<local_rank>/stacks.txt under the one run directory in `log_dir`.
std::string stacks_file(const std::string& log_dir, int attempt, int local_rank) {
  for (const auto& run_dir : fs::directory_iterator(log_dir)) {
    return (run_dir.path() / ("attempt_" + std::to_string(attempt)) / std::to_string(local_rank) /
            "stacks.txt")
        .string();
  }
  return "";
}

}  // namespace

TEST(StallE2E, StuckRankIsNamedAndTheGroupRecovers) {
  if (!have_torch()) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch (install python3-torch)";
  }
  auto dir = make_temp_dir("ddprun-stall-");
  auto r =
      run_ddprun({"--stall-timeout", "3", "--max-restarts", "1", "--python", "/usr/bin/python3",
                  "--log-dir", dir, source_path("tests/support/workers/stall_once.py")});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(std::regex_search(
      r.err, std::regex("worker group stalled: no output and no file-timer request for 3 s")))
      << r.err;
  EXPECT_TRUE(std::regex_search(
      r.err, std::regex("rank 1: wait_for_data \\(stall_once\\.py:[0-9]+\\) <- main "
                        "\\(stall_once\\.py:[0-9]+\\)")))
      << r.err;
  EXPECT_TRUE(std::regex_search(
      r.err, std::regex("rank 0: all_reduce \\(distributed_c10d\\.py:[0-9]+\\) <- train_step "
                        "\\(stall_once\\.py:[0-9]+\\)")))
      << r.err;
  for (int lr : {0, 1}) {
    EXPECT_TRUE(contains(read_file(stacks_file(dir, 0, lr)), "File \"")) << stacks_file(dir, 0, lr);
  }
  // The console is what the workers wrote, with no prefix (none was asked for).
  EXPECT_TRUE(contains(r.out, "\nrank 0 sum 2\n") || r.out.rfind("rank 0 sum 2\n", 0) == 0)
      << r.out;
  EXPECT_TRUE(contains(r.out, "rank 1 attempt 0 ready\n")) << r.out;
  EXPECT_FALSE(contains(r.out, "]:rank")) << r.out;
}

TEST(StallE2E, WithoutRestartsTheStallIsTheFailure) {
  if (!have_torch()) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch (install python3-torch)";
  }
  auto dir = make_temp_dir("ddprun-stall-");
  auto r = run_ddprun({"--stall-timeout", "2", "--max-restarts", "0", "--python",
                       "/usr/bin/python3", "--log-dir", dir + "/logs", "--events-file",
                       dir + "/events.jsonl", source_path("tests/support/workers/stall_once.py")},
                      {{"TORCHELASTIC_ERROR_FILE", dir + "/agent_error.json"}});
  EXPECT_EQ(r.status, 1) << r.err;
  // The summary's root cause names the stall (after torchrun's "Signal 6 ... received by PID").
  EXPECT_TRUE(contains(r.err,
                       ": worker group stalled: no output and no file-timer request for 2 s "
                       "(--stall-timeout)\n"))
      << r.err;
  const auto events = read_file(dir + "/events.jsonl");
  EXPECT_TRUE(contains(events, "\"event\":\"stall\"")) << events;
  EXPECT_TRUE(contains(events, "wait_for_data")) << events;
  const auto error_file = read_file(dir + "/agent_error.json");
  EXPECT_TRUE(contains(error_file, "worker group stalled")) << error_file;
  EXPECT_TRUE(contains(error_file, "wait_for_data")) << error_file;
}

TEST(StallE2E, ChattyWorkerNeverTripsItAndItsOutputIsUnchanged) {
  // 8 lines 0.5 s apart with a 2 s timeout: 4 s of work, never 2 s of silence. The worker
  // does not flush: it runs as `python -u`, as under torchrun.
  auto r = run_ddprun({"--stall-timeout", "2", "--max-restarts", "0", "--python", "python3",
                       source_path("tests/support/workers/ticker.py"), "0.5", "8"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(contains(r.err, "stalled")) << r.err;
  std::string expected;
  for (int i = 0; i < 8; ++i) {
    EXPECT_TRUE(contains(r.out, "tick " + std::to_string(i) + "\n")) << r.out;
  }
  EXPECT_FALSE(contains(r.out, "]:")) << "no prefix without --tee: " << r.out;
}

TEST(StallE2E, NoPythonStallIsReportedFromTheProcessState) {
  auto dir = make_temp_dir("ddprun-stall-");
  auto script = dir + "/w.sh";
  std::ofstream(script) << "#!/bin/sh\necho started\nexec /bin/sleep 60\n";
  fs::permissions(script, fs::perms::owner_all);
  // A PATH without gdb or eu-stack leaves only /proc.
  auto r = run_ddprun({"--no-python", "--stall-timeout", "1", "--max-restarts", "0", script},
                      {{"PATH", dir}});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "ranks 0-1: state S (sleeping)")) << r.err;
  EXPECT_TRUE(contains(r.err, "(/proc; full stacks in ")) << r.err;
  EXPECT_TRUE(contains(r.out, "started\nstarted\n")) << r.out;
}

TEST(MultinodeStallE2E, ReportOfTheDetectingNodeNamesTheStuckRankOnTheOtherNode) {
  if (!have_torch()) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch (install python3-torch)";
  }
  namespace mn = ddprun::test::multinode;
  // Node 0 (its rank waiting in all_reduce) finds the stall first: its timeout is the shorter.
  // The stuck rank (in wait_for_data) is node 1's, which answers the request with its stacks.
  // Which node gets rank 0 is the rendezvous' choice, so the ranks are not named.
  const int port = free_port();
  const auto dir = make_temp_dir("ddprun-mnstall-");
  mn::Agents agents;
  for (int node : {0, 1}) {
    agents.start(
        mn::concat(mn::concat(mn::clean_ddprun(node == 1 ? "STALL_HERE=1" : "STALL_HERE=0"),
                              mn::c10d_flags("2", port, 1, mn::loopback(node), "join_timeout=60")),
                   {"--stall-timeout", node == 0 ? "3" : "60", "--max-restarts", "1", "--log-dir",
                    dir + "/node" + std::to_string(node), "--python", "/usr/bin/python3",
                    mn::worker("stall_once.py")}));
  }
  for (std::size_t i = 0; i < agents.size(); ++i) {
    ASSERT_EQ(agents.wait(i, std::chrono::seconds(120)), 0) << agents.all_logs();
  }
  const auto report = agents.err(0);
  EXPECT_TRUE(
      contains(report, "stacks of the ranks still running on 2 nodes [worker group stalled"))
      << agents.all_logs();
  EXPECT_TRUE(std::regex_search(report, std::regex("rank [01]: wait_for_data \\(stall_once\\.py:")))
      << agents.all_logs();
  EXPECT_TRUE(
      std::regex_search(report, std::regex("rank [01]: all_reduce \\(distributed_c10d\\.py:")))
      << agents.all_logs();
  EXPECT_FALSE(contains(report, "did not answer")) << agents.all_logs();
  EXPECT_TRUE(contains(agents.err(1), "another node asked for every rank's stack"))
      << agents.all_logs();
  EXPECT_TRUE(contains(agents.out(0) + agents.out(1), "sum 2")) << agents.all_logs();
}

// --stall-timeout auto, with a start-up bound and a floor small enough for a test: the agent
// learns the gaps of 30 healthy gloo steps, then finds the silent hang on the learned value,
// reports how it came about, takes every rank's stack and restarts.
TEST(StallAutoE2E, GlooHangIsFoundOnTheLearnedTimeout) {
  if (!have_torch()) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch (install python3-torch)";
  }
  auto dir = make_temp_dir("ddprun-stall-auto-");
  auto r = run_ddprun(
      {"--stall-timeout", "auto", "--stall-startup-timeout", "4", "--stall-timeout-floor", "2",
       "--max-restarts", "1", "--python", "/usr/bin/python3", "--log-level", "INFO", "--log-dir",
       dir + "/logs", "--events-file", dir + "/events.jsonl",
       source_path("tests/support/workers/stall_once.py")},
      {{"STEPS", "30"}});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(std::regex_search(
      r.err, std::regex("worker group stalled: no output and no file-timer request for [0-9.]+ "
                        "s; longest gap in [0-9.]+ s of healthy running: [0-9.]+ s "
                        "\\(--stall-timeout auto: ")))
      << r.err;
  EXPECT_FALSE(std::regex_search(r.err, std::regex("worker group stalled[^\n]*start-up bound")))
      << "it stalled on the learned value, not the start-up bound: " << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex("rank 1: wait_for_data \\(stall_once\\.py:")))
      << r.err;
  EXPECT_TRUE(contains(r.err, "stall timeout: 4 s (--stall-timeout auto: the start-up bound"))
      << "INFO says the value at the start: " << r.err;
  const auto events = read_file(dir + "/events.jsonl");
  EXPECT_TRUE(contains(events, "\"event\":\"stall_timeout\"")) << events;
  EXPECT_TRUE(contains(events, "\"event\":\"stall\"")) << events;
  EXPECT_TRUE(contains(r.out, "sum 2\n")) << "the restarted group finished: " << r.out;
}

// PET_STALL_TIMEOUT=auto, a shell worker (no torch): 3 s of lines, then silence.
TEST(StallAutoE2E, EnvironmentTurnsItOnAndASilentWorkerIsStopped) {
  auto dir = make_temp_dir("ddprun-stall-auto-");
  auto script = dir + "/w.sh";
  std::ofstream(script) << "#!/bin/sh\nfor i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do echo "
                           "step $i; sleep 0.2; done\nexec /bin/sleep 60\n";
  fs::permissions(script, fs::perms::owner_all);
  auto r = run_ddprun({"--no-python", "--stall-startup-timeout", "2", "--stall-timeout-floor", "1",
                       "--max-restarts", "0", script},
                      {{"PET_STALL_TIMEOUT", "auto"}});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "worker group stalled: no output and no file-timer request for "))
      << r.err;
  EXPECT_TRUE(contains(r.err, " of healthy running: ")) << r.err;
  EXPECT_TRUE(contains(r.out, "step 15\n")) << "the workers ran before the silence: " << r.out;
}
