// Chaos, one node: SIGKILL of workers (100 times in a row) and of the agent itself.
// docs/reliability.md says what each test injects and what must hold.

#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <sstream>

#include "support/subprocess.hpp"

using namespace ddprun::test;
namespace fs = std::filesystem;

namespace {

constexpr int k_kills = 100;
constexpr auto k_step_timeout = std::chrono::seconds(30);
constexpr auto k_gone_timeout = std::chrono::seconds(20);

std::string worker(const std::string& name) { return source_path("tests/support/workers/" + name); }

/// A cheap worker: says which attempt it is on stdout, publishes its pid once running, and
/// sleeps (exec keeps the pid) until killed; on the last attempt it exits 0 when told to.
std::string write_kill_target(const std::string& dir) {
  auto path = dir + "/target.sh";
  std::ofstream(path) << "#!/bin/sh\n"
                         "echo \"restart_count=$TORCHELASTIC_RESTART_COUNT rank=$RANK\"\n"
                         "if [ \"$TORCHELASTIC_RESTART_COUNT\" = \""
                      << k_kills
                      << "\" ]; then\n"
                         "  touch \"$1/pid_${TORCHELASTIC_RESTART_COUNT}_$RANK\"\n"
                         "  while [ ! -e \"$1/go\" ]; do sleep 0.05; done\n"
                         "  exit 0\n"
                         "fi\n"
                         "echo $$ > \"$1/tmp_$RANK.$$\"\n"
                         "mv \"$1/tmp_$RANK.$$\" \"$1/pid_${TORCHELASTIC_RESTART_COUNT}_$RANK\"\n"
                         "exec sleep 300\n";
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

pid_t read_pid(const std::string& path) { return static_cast<pid_t>(std::stol(read_file(path))); }

/// Zombie children of `parent` (state Z with that ppid), from /proc.
int zombie_children(pid_t parent) {
  int n = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    auto stat = read_file((entry.path() / "stat").string());
    auto close_paren = stat.rfind(')');
    if (close_paren == std::string::npos) {
      continue;
    }
    std::istringstream rest(stat.substr(close_paren + 2));
    std::string state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    n += (state == "Z" && ppid == parent) ? 1 : 0;
  }
  return n;
}

std::set<std::string> attempt_dirs(const std::string& log_dir) {
  std::set<std::string> out;
  for (const auto& run : fs::directory_iterator(log_dir)) {
    for (const auto& attempt : fs::directory_iterator(run.path())) {
      out.insert(attempt.path().filename().string());
    }
  }
  return out;
}

std::string run_dir(const std::string& log_dir) {
  return fs::directory_iterator(log_dir)->path().string();
}

}  // namespace

TEST(ChaosProcess, HundredWorkerKillsRestartExactlyAndLeaveNothing) {
  auto dir = make_temp_dir("ddprun-chaos-kill-");
  auto logs = dir + "/logs";
  auto tag = unique_tag();
  // Every attempt dies of SIGKILL at once, as a crash loop would: the limit is off to count
  // exactly k_kills restarts.
  auto bg =
      start({"/usr/bin/env", tag, ddprun_bin(), "--nproc_per_node=2",
             "--max_restarts=" + std::to_string(k_kills), "--crash-loop-limit=0",
             "--log_dir=" + logs, "--redirects=3", "--no_python", write_kill_target(dir), dir});
  std::mt19937 rng(std::random_device{}());
  for (int attempt = 0; attempt < k_kills; ++attempt) {
    auto pid_file = [&](int rank) {
      return dir + "/pid_" + std::to_string(attempt) + "_" + std::to_string(rank);
    };
    ASSERT_TRUE(eventually([&] { return fs::exists(pid_file(0)) && fs::exists(pid_file(1)); },
                           k_step_timeout))
        << "attempt " << attempt << " never started; stderr:\n"
        << read_file(bg.err_path);
    int rank = static_cast<int>(rng() % 2);
    ASSERT_EQ(kill(read_pid(pid_file(rank)), SIGKILL), 0) << "attempt " << attempt;
  }
  auto last = dir + "/pid_" + std::to_string(k_kills) + "_";
  ASSERT_TRUE(
      eventually([&] { return fs::exists(last + "0") && fs::exists(last + "1"); }, k_step_timeout))
      << read_file(bg.err_path);
  EXPECT_TRUE(eventually([&] { return zombie_children(bg.pid) == 0; }, k_gone_timeout))
      << zombie_children(bg.pid) << " unreaped children of the agent";
  std::ofstream(dir + "/go").flush();
  ASSERT_EQ(wait_for(bg.pid, k_step_timeout), 0) << read_file(bg.err_path);
  EXPECT_TRUE(eventually([&] { return processes_with_env(tag).empty(); }, k_gone_timeout))
      << processes_with_env(tag).size() << " processes left";

  auto err = read_file(bg.err_path);
  for (int left : {k_kills, 1}) {
    auto line = "Worker group FAILED. " + std::to_string(left) + "/" + std::to_string(k_kills) +
                " attempts left";
    EXPECT_NE(err.find(line), std::string::npos) << line;
  }
  EXPECT_EQ(err.find(". 0/" + std::to_string(k_kills) + " attempts left"), std::string::npos);
  // One attempt directory per attempt, each with both ranks' logs naming that attempt.
  auto attempts = attempt_dirs(logs);
  EXPECT_EQ(attempts.size(), static_cast<std::size_t>(k_kills + 1));
  for (int attempt = 0; attempt <= k_kills; ++attempt) {
    for (int rank = 0; rank < 2; ++rank) {
      auto log = run_dir(logs) + "/attempt_" + std::to_string(attempt) + "/" +
                 std::to_string(rank) + "/stdout.log";
      EXPECT_EQ(read_file(log),
                "restart_count=" + std::to_string(attempt) + " rank=" + std::to_string(rank) + "\n")
          << log;
    }
  }
}

TEST(ChaosProcess, KilledAgentTakesWorkersAndTheirChildrenAlong) {
  auto dir = make_temp_dir("ddprun-chaos-agent-");
  auto tag = unique_tag();
  auto bg = start({"/usr/bin/env", tag, ddprun_bin(), "--nproc_per_node=2", "--no_python",
                   worker("stubborn.sh"), dir});
  ASSERT_TRUE(eventually(
      [&] { return fs::exists(dir + "/ready_0") && fs::exists(dir + "/ready_1"); }, k_step_timeout))
      << read_file(bg.err_path);
  // agent + guardian + 2 x (worker shell + 2 sleeping grandchildren)
  ASSERT_TRUE(eventually([&] { return processes_with_env(tag).size() >= 8u; }, k_step_timeout))
      << processes_with_env(tag).size();
  auto killed_at = std::chrono::steady_clock::now();
  kill(bg.pid, SIGKILL);
  EXPECT_EQ(wait_for(bg.pid, k_gone_timeout), 128 + SIGKILL);
  bool gone = eventually([&] { return processes_with_env(tag).empty(); }, k_gone_timeout);
  auto took = std::chrono::steady_clock::now() - killed_at;
  EXPECT_TRUE(gone) << processes_with_env(tag).size() << " processes outlived the agent";
  // Recorded for docs/reliability.md, never asserted (the machine is shared).
  std::cout << "[ measure  ] cleanup after agent SIGKILL: "
            << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms\n";
  EXPECT_NE(read_file(bg.err_path).find("killed 2 worker process group(s)"), std::string::npos)
      << read_file(bg.err_path);
  for (auto pid : processes_with_env(tag)) {
    kill(pid, SIGKILL);
  }
}
