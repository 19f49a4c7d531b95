#include "ddprun/agent/group_workers.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "../../support/fake_launcher.hpp"

namespace ddprun::agent {
namespace {

/// Output kept by the agent: an error file for rank 0 (maybe), a stderr tail for each.
class TailIo final : public WorkerIo {
 public:
  Result<void> begin_attempt(int, int) override { return {}; }
  std::string error_file(int local_rank) const override {
    return local_rank == 0 ? error_file_ : "";
  }
  Result<ChildFds> open(const WorkerRanks&) override { return ChildFds{}; }
  void spawned(int, pid_t) override {}
  asio::awaitable<void> drain(std::chrono::milliseconds) override { co_return; }
  std::vector<std::string> stderr_tail(int local_rank) const override {
    return {"line of rank " + std::to_string(local_rank), "  ValueError: bad value  ", " "};
  }
  std::string run_dir() const override { return ""; }
  std::string error_file_;
};

WorkerRanks ranks_of(int local_rank) {
  WorkerRanks r;
  r.local_rank = local_rank;
  r.rank = 10 + local_rank;
  return r;
}

process::ExitInfo exit_code(int code) { return process::ExitInfo{code, 0, false, false}; }
process::ExitInfo killed_by(int sig) { return process::ExitInfo{0, sig, true, false}; }

TEST(GroupWorkers, FailuresAreKeptInTheOrderTheyWereSeenAndTheFirstNamesTheGroupsFailure) {
  GroupWorkers group;
  for (int lr = 0; lr < 3; ++lr) {
    group.add(ranks_of(lr), 100 + lr);
  }
  const auto when = std::chrono::system_clock::now();
  EXPECT_EQ(group.failure_reason(), "failure");
  EXPECT_EQ(group.ended(999, exit_code(1), when), nullptr) << "not a worker: an orphan";
  ASSERT_NE(group.ended(100, exit_code(0), when), nullptr);
  EXPECT_FALSE(group.failed()) << "a success is no failure";
  group.ended(102, killed_by(SIGSEGV), when);
  group.ended(101, exit_code(3), when);
  EXPECT_TRUE(group.failed());
  EXPECT_EQ(group.failure_reason(), "rank 12 failed (exitcode: -11, SIGSEGV)");
  EXPECT_EQ(group.ended(102, exit_code(0), when), nullptr) << "reaped once";
  TailIo io;
  const auto failures = group.failures(io, "");
  ASSERT_EQ(failures.size(), 2U);
  EXPECT_EQ(failures[0].ranks.rank, 12);
  EXPECT_EQ(failures[1].ranks.rank, 11);
  EXPECT_EQ(failures[1].stderr_tail.size(), 3U);
  EXPECT_EQ(failure_signature(*group.first_failure(), io),
            "rank 12: SIGSEGV: ValueError: bad value");
  EXPECT_EQ(group.running(), 0);
  EXPECT_FALSE(group.all_succeeded());
}

TEST(GroupWorkers, ASignatureTakesTheErrorFilesLastTracebackLineBeforeTheStderrTail) {
  const auto dir = std::filesystem::temp_directory_path() / "ddprun_group_workers_test";
  std::filesystem::create_directories(dir);
  TailIo io;
  io.error_file_ = (dir / "error.json").string();
  std::ofstream(io.error_file_)
      << R"({"message": {"message": "RuntimeError: boom", )"
      << R"("extraInfo": {"py_callstack": "Traceback:\n  x\nRuntimeError: boom\n", )"
      << R"("timestamp": "1"}}})";
  GroupWorkers group;
  group.add(ranks_of(0), 100);
  group.ended(100, exit_code(1), std::chrono::system_clock::now());
  EXPECT_EQ(failure_signature(*group.first_failure(), io),
            "rank 10: exitcode 1: RuntimeError: boom");
  std::filesystem::remove_all(dir);
}

TEST(GroupWorkers, AStallWithNoFailedWorkerIsStoodForByTheFirstUnfinishedOne) {
  GroupWorkers group;
  group.add(ranks_of(0), 100);
  group.add(ranks_of(1), 101);
  group.ended(100, exit_code(0), std::chrono::system_clock::now());
  TailIo io;
  EXPECT_TRUE(group.failures(io, "").empty());
  const auto stalled = group.failures(io, "worker group stalled");
  ASSERT_EQ(stalled.size(), 1U);
  EXPECT_EQ(stalled[0].ranks.rank, 11);
  EXPECT_EQ(stalled[0].reason, "worker group stalled");
}

TEST(GroupWorkers, StackTargetsAreTheRunningWorkersMarkedStoppingOneKeptRunning) {
  GroupWorkers group;
  group.add(ranks_of(0), 100);
  group.add(ranks_of(1), 101);
  group.add(ranks_of(2), 102);
  group.ended(100, exit_code(0), std::chrono::system_clock::now());
  const auto targets = group.stack_targets(102);
  ASSERT_EQ(targets.size(), 2U);
  EXPECT_EQ(targets[0].pid, 101);
  EXPECT_FALSE(targets[0].keep_running);
  EXPECT_TRUE(targets[1].keep_running);
  EXPECT_FALSE(group.any_watched()) << "every target was marked stopping";
  group.ended(101, killed_by(SIGABRT), std::chrono::system_clock::now());
  EXPECT_FALSE(group.failed()) << "an end the agent asked for is no failure of its own";
}

TEST(GroupWorkers, AStopSignalsEachLiveGroupAndNamesTheWorkersItCouldNotEnd) {
  test::FakeLauncher launcher;
  GroupWorkers group;
  for (int lr = 0; lr < 2; ++lr) {
    auto pid = launcher.spawn(process::SpawnRequest{});
    ASSERT_TRUE(pid);
    group.add(ranks_of(lr), *pid);
  }
  EXPECT_FALSE(group.all_stopped(launcher));
  launcher.make_unkillable(group.all()[1].pid());
  group.signal(launcher, SIGKILL, SIGTERM);
  for (const auto& r : launcher.reap_exited()) {
    group.ended(r.pid, process::decode_wait_status(r.status), std::chrono::system_clock::now());
  }
  const auto stuck = group.after_stop(launcher);
  ASSERT_EQ(stuck.size(), 1U);
  EXPECT_EQ(stuck[0].pid, group.all()[1].pid());
  EXPECT_EQ(launcher.forgotten(), std::vector<pid_t>{group.all()[0].pid()})
      << "only the empty group is forgotten";
  EXPECT_FALSE(group.all_stopped(launcher));
  launcher.thaw(group.all()[1].pid());
  for (const auto& r : launcher.reap_exited()) {
    group.ended(r.pid, process::decode_wait_status(r.status), std::chrono::system_clock::now());
  }
  EXPECT_TRUE(group.all_stopped(launcher));
}

}  // namespace
}  // namespace ddprun::agent
