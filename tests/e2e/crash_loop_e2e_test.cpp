// Crash loops and the job's restart budget (issue #27 §4, #39 §1): by default, as under
// torchrun, a job spends every restart, and a worker killed at once in 30 attempts that gets
// through in the 31st finishes with exit 0, the restart lines naming the streak the stop would
// have ended; with --crash-loop-limit, a job whose worker fails the same way at once, attempt
// after attempt, stops with exit status 3 (do not requeue) after that many attempts instead of
// spending --max-restarts, on one node and on two c10d nodes; an agent started again mid-job
// continues the job's restart count. The etcd-v3 case is in etcd_e2e_test.cpp.

#include <gtest/gtest.h>

#include <signal.h>

#include "crash_loop_scenario.hpp"

using namespace ddprun::test;
using namespace ddprun::test::multinode;

namespace {

/// Lines of rank `rank`'s attempts.sh log in `dir`.
std::vector<std::string> attempt_lines(const std::string& dir, int rank) {
  std::vector<std::string> out;
  std::istringstream in(read_file(dir + "/rank_" + std::to_string(rank) + ".log"));
  for (std::string line; std::getline(in, line);) {
    out.push_back(line);
  }
  return out;
}

/// Occurrences of `needle` in `text`.
std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// What torchrun does with --max_restarts 30 (1.13 and 2.14): restart 30 times, exit 0. ($$$$:
// the worker's arguments are a template, as under torchrun, where $$ is a $.)
TEST(CrashLoopE2E, AJobKilledThirtyTimesThatGetsThroughFinishesWithTheHint) {
  const std::string dir = make_temp_dir("ddprun-loop30-");
  auto r = run(concat(clean_ddprun(),
                      {"--nproc_per_node", "1", "--max_restarts", "30", "--events-file",
                       dir + "/events.jsonl", "--no_python", "/bin/sh", "-c",
                       "[ \"$TORCHELASTIC_RESTART_COUNT\" -lt 30 ] && kill -9 $$$$; echo done"}),
               RunOptions{{}, {}, "", std::chrono::seconds(180)});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count_of(r.out, "done"), 1U) << r.out;
  EXPECT_EQ(count_of(read_file(dir + "/events.jsonl"), "\"event\":\"workers_started\""), 31U);
  EXPECT_FALSE(contains(r.err, "restarting would not help")) << r.err;
  const std::string hint =
      "attempts failed the same way within 300 s of their start (rank 0: SIGKILL); "
      "--crash-loop-limit 3 would have stopped the job after 3 of them with exit status 3 (do "
      "not requeue)";
  EXPECT_EQ(count_of(r.err, hint), 28U) << "one on each restart line from the third on: " << r.err;
  EXPECT_TRUE(contains(r.err, "the last 30 " + hint)) << r.err;
  EXPECT_TRUE(contains(r.err, "(the stop is off by default, as in torchrun)")) << r.err;
}

TEST(CrashLoopE2E, OneNodeStopsAfterThreeIdenticalFailuresWithDoNotRequeue) {
  const std::string dir = make_temp_dir("ddprun-loop1-");
  auto r =
      run(concat(clean_ddprun(), {"--nproc_per_node", "2", "--max_restarts", "10",
                                  "--crash-loop-limit", "3", "--events-file", dir + "/events.jsonl",
                                  "--no_python", worker("attempts.sh"), dir, "1", "4"}),
          RunOptions{{}, {}, "", std::chrono::seconds(120)});
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(attempt_lines(dir, 1).size(), 3U) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "stopped: the last 3 attempts failed the same way within 300 s of "
                       "their start (rank 1: exitcode 4): restarting would not help "
                       "(--crash-loop-limit 3)"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "Root Cause")) << "the last attempt's summary: " << r.err;
  EXPECT_TRUE(contains(read_file(dir + "/events.jsonl"), "\"state\":\"CRASH_LOOP\"")) << r.err;
}

// The default (0) spends every restart; the final summary names the streak and what the stop
// would have saved.
TEST(CrashLoopE2E, TheDefaultSpendsEveryRestartAndTheSummaryNamesTheStreak) {
  const std::string dir = make_temp_dir("ddprun-loop0-");
  auto r = run(concat(clean_ddprun(), {"--nproc_per_node", "1", "--max_restarts", "4",
                                       "--no_python", worker("attempts.sh"), dir, "0", "4"}),
               RunOptions{{}, {}, "", std::chrono::seconds(120)});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(attempt_lines(dir, 0).size(), 5U) << r.err;
  EXPECT_FALSE(contains(r.err, "restarting would not help")) << r.err;
  const auto box = r.err.find("Root Cause");
  ASSERT_NE(box, std::string::npos) << r.err;
  const auto hint = r.err.find(
      "the last 5 attempts failed the same way within 300 s of their start (rank 0: exitcode 4)",
      box);
  EXPECT_NE(hint, std::string::npos) << "the hint follows the final summary: " << r.err;
}

TEST(CrashLoopE2E, TwoC10dNodesStopTogether) {
  const int port = free_port();
  expect_crash_loop_stops_the_job(
      CrashLoopJob{[port](std::size_t i) {
                     return c10d_flags("2", port, 1, loopback(static_cast<int>(i)), k_fast_conf);
                   },
                   true});
}

// torchrun counts restarts per agent, so an agent started again begins at 0 and the job can
// go past --max-restarts (pytorch#147064). Here the job's count lives in the rendezvous: node 1
// fails once (the job's count becomes 1), its agent is killed, a new agent takes its place, and
// its workers start with TORCHELASTIC_RESTART_COUNT=1, as the survivor's do.
TEST(CrashLoopE2E, AnAgentStartedAgainContinuesTheJobsRestartCount) {
  const int port = free_port();
  const std::vector<std::string> dirs{make_temp_dir("ddprun-rejoin-"),
                                      make_temp_dir("ddprun-rejoin-"),
                                      make_temp_dir("ddprun-rejoin-")};
  const std::string release = dirs[0] + "/release";
  const auto argv = [&](std::size_t dir, int addr, const std::string& mode) {
    return concat(concat(concat(clean_ddprun(), {"--max_restarts", "3"}),
                         c10d_flags("1:2", port, 1, loopback(addr), k_fast_conf)),
                  rounds(dirs[dir], release, mode));
  };
  Agents agents;
  ASSERT_TRUE(start_host(agents, argv(0, 0, ""))) << agents.all_logs();
  agents.start(argv(1, 1, "fail_first"));
  ASSERT_TRUE(eventually(
      [&] {
        auto s = starts(dirs[1]);
        return s.size() >= 2 && s.back()["restart"] == "1" && s.back()["group_world"] == "2";
      },
      k_event_timeout))
      << agents.all_logs();
  agents.signal(1, SIGKILL);
  EXPECT_EQ(agents.wait(1), 128 + SIGKILL);
  ASSERT_TRUE(
      eventually([&] { return last_start_has(dirs[0], "group_world", "1"); }, k_event_timeout))
      << "the survivor did not re-form alone\n"
      << agents.all_logs();
  agents.start(argv(2, 1, "fail_first"));  // fails again if it starts at 0
  ASSERT_TRUE(
      eventually([&] { return last_start_has(dirs[2], "group_world", "2"); }, k_event_timeout))
      << agents.all_logs();
  EXPECT_EQ(starts(dirs[2]).front().at("restart"), "1") << agents.all_logs();
  EXPECT_EQ(starts(dirs[0]).back().at("restart"), "1") << agents.all_logs();
  touch(release);
  EXPECT_EQ(agents.wait(0), 0) << agents.all_logs();
  EXPECT_EQ(agents.wait(2), 0) << agents.all_logs();
}

}  // namespace
