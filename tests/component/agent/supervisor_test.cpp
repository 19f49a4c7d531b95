// The supervisor's decisions, driven through its seams: FakeLauncher (no fork), a scripted
// rendezvous and worker I/O that writes nothing. Real pieces: the io_context, the signal_set
// (SIGCHLD raised by the fake, SIGTERM/SIGINT raised by the test) and the clock.

#include "ddprun/agent/supervisor.hpp"

#include "ddprun/agent/stack_capture.hpp"
#include "ddprun/util/exit_status.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <map>
#include <memory>
#include <optional>

#include "support/fake_launcher.hpp"
#include "support/shifted_clock.hpp"

namespace ddprun::agent {
namespace {

using namespace std::chrono_literals;

/// Rounds formed at once for one node; records what the supervisor asked of it.
class ScriptedRendezvous final : public Rendezvous, public StackExchange {
 public:
  ScriptedRendezvous(asio::io_context& ctx, const config::LaunchConfig& cfg)
      : cfg_(cfg), forever_(ctx) {}

  asio::awaitable<Result<Round>> next_round(int restart_count) override {
    forever_.cancel();  // ends the previous round's watch()
    joins.push_back(restart_count);
    if (hang_join) {
      co_await wait_forever();
    }
    const int join = static_cast<int>(joins.size()) - 1;
    if (join == give_up_at_join) {
      co_return make_error(ErrorCode::given_up, "stopped: a crash loop");
    }
    if (auto it = job_restarts.find(join); it != job_restarts.end()) {
      restart_count = it->second;  // the job's count, as a multi-node rendezvous gives it
    }
    Round round;
    round.round_number = join;
    round.info = RoundInfo{"127.0.0.1", 29500, restart_count,  cfg_.group.max_restarts,
                           "fake",      false, cfg_.group.role};
    const int n = cfg_.group.nproc_per_node;
    round.ranks = worker_ranks(NodePlace{0, 1, n, 0, n, 0, n});
    co_return round;
  }
  asio::awaitable<RdzvSignal> watch() override {
    if (auto it = raise_in_round.find(static_cast<int>(joins.size()) - 1);
        it != raise_in_round.end()) {
      auto signal = it->second;
      raise_in_round.erase(it);  // once: a watch started after it waits
      co_return signal;
    }
    co_await wait_forever();
    co_return RdzvSignal::none;
  }
  asio::awaitable<rdzv::CrashStreak> report_failure(FailureNote note) override {
    ++failure_reports;
    notes.push_back(std::move(note));
    co_return streak;
  }
  asio::awaitable<std::string> exclusion() override {
    ++exclusion_checks;
    co_return failure_reports >= exclude_after ? "left out" : "";
  }
  asio::awaitable<void> withdraw() override {
    ++withdrawals;
    co_return;
  }
  asio::awaitable<void> mark_unhealthy(std::string reason) override {
    unhealthy.push_back(std::move(reason));
    co_return;
  }
  asio::awaitable<void> exit_barrier(bool success) override {
    barriers.push_back(success);
    if (hang_barrier) {
      ::kill(::getpid(), SIGTERM);  // the user gives up on a node that never arrives
      co_await wait_forever();
    }
  }
  asio::awaitable<void> shutdown() override {
    ++shutdowns;
    co_return;
  }
  asio::awaitable<void> leave(std::chrono::milliseconds /*bound*/) override {
    ++leaves;
    co_return;
  }
  std::string describe() const override { return "scripted rendezvous"; }
  asio::awaitable<bool> request_stacks(std::string reason) override {
    stack_requests.push_back(std::move(reason));
    co_return !peers.answers.empty() || !peers.missing.empty();
  }
  std::string stacks_request() const override { return "peer stalled"; }
  asio::awaitable<void> answer_stacks(errors::NodeStacks mine) override {
    answers.push_back(std::move(mine));
    co_return;
  }
  asio::awaitable<PeerStacks> collect_stacks(std::chrono::milliseconds /*bound*/) override {
    co_return peers;
  }

  bool hang_join = false;
  rdzv::CrashStreak streak;         ///< what report_failure() answers
  int give_up_at_join = -1;         ///< this join fails with ErrorCode::given_up
  std::map<int, int> job_restarts;  ///< join -> the restart count the round carries
  bool hang_barrier = false;  ///< the exit barrier waits for a node that never comes (SIGTERM)
  std::map<int, RdzvSignal> raise_in_round;  ///< round number -> what watch() says at once
  std::vector<int> joins;                    ///< restart_count of each next_round call
  std::vector<bool> barriers;
  int failure_reports = 0;
  std::vector<FailureNote> notes;
  int exclude_after = 1'000'000;  ///< exclusion() leaves this node out from this many reports
  int exclusion_checks = 0;
  int withdrawals = 0;
  std::vector<std::string> unhealthy;  ///< mark_unhealthy's reasons
  int shutdowns = 0;
  int leaves = 0;
  std::vector<std::string> stack_requests;  ///< reasons this node asked the others with
  std::vector<errors::NodeStacks> answers;  ///< what this node published
  PeerStacks peers;                         ///< what the other nodes answer

 private:
  asio::awaitable<void> wait_forever() {
    forever_.expires_at(std::chrono::steady_clock::time_point::max());
    boost::system::error_code ec;
    co_await forever_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }

  const config::LaunchConfig& cfg_;
  asio::steady_timer forever_;
};

class SilentIo final : public WorkerIo {
 public:
  Result<void> begin_attempt(int /*attempt*/, int /*nproc*/) override { return {}; }
  std::string error_file(int /*local_rank*/) const override { return ""; }
  Result<ChildFds> open(const WorkerRanks& /*ranks*/) override { return ChildFds{}; }
  void spawned(int /*local_rank*/, pid_t /*pid*/) override {}
  asio::awaitable<void> drain(std::chrono::milliseconds /*max_wait*/) override { co_return; }
  std::vector<std::string> stderr_tail(int /*local_rank*/) const override { return {}; }
  std::string run_dir() const override { return ""; }
  util::SteadyTime last_output() const override { return last; }
  util::SteadyTime last{};  ///< the test moves it to play output
};

/// The watchdog seam in memory: the test makes timers expire.
class FakeWatchdog final : public Watchdog {
 public:
  Result<std::string> start(std::function<void(TimerExpiry)> on_expired) override {
    on_expired_ = std::move(on_expired);
    ++starts;
    return std::string("/fake/watchdog_timer");
  }
  void forget(pid_t pid) override { forgotten.push_back(pid); }
  void stop() override {
    on_expired_ = nullptr;
    ++stops;
  }
  /// The timer `scope` of `pid` runs out (ignored while stopped, as a closed FIFO would be).
  void expire(pid_t pid, int sig, const std::string& scope) {
    if (on_expired_) {
      on_expired_(TimerExpiry{pid, sig, scope});
    }
  }

  int starts = 0;
  int stops = 0;
  std::vector<pid_t> forgotten;

 private:
  std::function<void(TimerExpiry)> on_expired_;
};

/// Records what it was asked to capture; a Python worker's faulthandler dump may end the
/// worker it captures, which `kill_with` plays.
class RecordingCapture final : public StackCapture {
 public:
  explicit RecordingCapture(test::FakeLauncher& launcher) : launcher_(launcher) {}
  asio::awaitable<StackReport> capture(std::vector<StackTarget> targets, std::string reason,
                                       std::chrono::milliseconds hold) override {
    holds.push_back(hold);
    StackReport report;
    report.method = "fake";
    std::vector<int> ranks;
    for (const auto& t : targets) {
      captured.push_back(t.ranks.rank);
      if (t.keep_running) {
        kept_running.push_back(t.ranks.rank);
      }
      ranks.push_back(t.ranks.rank);
      report.files.push_back("/fake/" + std::to_string(t.ranks.local_rank) + "/stacks.txt");
      if (kill_with != 0 && !t.keep_running) {
        launcher_.kill_with(t.pid, kill_with);
      }
    }
    report.groups.push_back(errors::StackGroup{ranks, "wait (w.py:1)"});
    reasons.push_back(std::move(reason));
    co_return report;
  }
  int kill_with = 0;
  std::vector<int> captured;
  std::vector<int> kept_running;                 ///< ranks the capture had to leave running
  std::vector<std::chrono::milliseconds> holds;  ///< how long each capture froze its targets
  std::vector<std::string> reasons;

 private:
  test::FakeLauncher& launcher_;
};

void raise_signal(int sig) { ::kill(::getpid(), sig); }

class SupervisorTest : public ::testing::Test {
 protected:
  void configure(int nproc, int max_restarts) {
    cfg_.group.nproc_per_node = nproc;
    cfg_.group.max_restarts = max_restarts;
    cfg_.command.no_python = true;
    cfg_.command.training_script = "/bin/true";
    cfg_.supervision.shutdown_timeout = 100ms;
    cfg_.supervision.signals_to_handle = {SIGTERM, SIGINT};
  }

  /// Runs the supervisor to its exit code (bounded); `on_start(round, pids)` scripts workers.
  int run(std::function<void(int, const std::vector<pid_t>&)> on_start) {
    SupervisorHooks hooks;
    int round = 0;
    hooks.workers_started = [&](const Round&, const std::vector<pid_t>& pids) {
      on_start(round++, pids);
    };
    hooks.failed = [&](const std::vector<WorkerFailure>& f) { failures_ = f; };
    hooks.attempt_failed = [&](const std::vector<WorkerFailure>& f) {
      attempt_failures_.push_back(f);
    };
    hooks.watchdog_expired = [&](const WorkerRanks& r, const TimerExpiry& e) {
      watchdog_hits_.push_back({r.local_rank, e.scope_id});
    };
    hooks.stacks_taken = [&](const StackReport& r) { reports_.push_back(r); };
    hooks.gave_up = [&](const std::string& reason) { gave_up_.push_back(reason); };
    hooks.stall_timeout_changed = [&](std::chrono::milliseconds v, const std::string& why) {
      stall_changes_.emplace_back(v, why);
    };
    auto supervisor = std::make_unique<Supervisor>(
        ctx_,
        SupervisorPlan{cfg_.group, cfg_.supervision, cfg_.command, cfg_.host,
                       cfg_.rdzv.rdzv_settings, util::Env{}},
        SupervisorSeams{launcher_, clock_, rdzv_, io_, watchdog_, &capture_, &rdzv_},
        std::move(hooks));
    std::optional<int> status;
    asio::co_spawn(ctx_, supervisor->run(), [&](const std::exception_ptr& e, int code) {
      status = e ? -1 : code;
      ctx_.stop();
    });
    ctx_.run_for(20s);
    // The supervisor's signal loop and the rendezvous watch are still pending, as when the
    // agent exits: they are never resumed again, and their frames go with ctx_ (declared
    // first, destroyed last). Resuming them after the supervisor is gone would touch it.
    supervisor.reset();
    EXPECT_TRUE(status.has_value()) << "the supervisor did not finish within 20 s";
    return status.value_or(-2);
  }

  asio::io_context ctx_{1};
  config::LaunchConfig cfg_;
  test::ShiftedClock clock_;  ///< every time the supervisor reports comes through its seam
  test::FakeLauncher launcher_;
  ScriptedRendezvous rdzv_{ctx_, cfg_};
  SilentIo io_;
  RecordingCapture capture_{launcher_};
  std::vector<WorkerFailure> failures_;
  std::vector<std::vector<WorkerFailure>> attempt_failures_;
  Watchdog* watchdog_ = nullptr;  ///< set to &timers_ to arm the fake watchdog
  FakeWatchdog timers_;
  std::vector<std::pair<int, std::string>> watchdog_hits_;  ///< (local_rank, scope)
  /// What stall_timeout_changed said, in order (--stall-timeout auto).
  std::vector<std::pair<std::chrono::milliseconds, std::string>> stall_changes_;
  std::vector<StackReport> reports_;
  std::vector<std::string> gave_up_;
};

const std::vector<int> k_term_plan{SIGCONT, SIGTERM};

TEST_F(SupervisorTest, FirstFailureStopsTheRestAndReportsOnlyIt) {
  configure(3, 0);
  int rc = run([&](int, const std::vector<pid_t>& pids) { launcher_.exit_with(pids[1], 3); });
  EXPECT_EQ(rc, 1);
  const auto& pids = launcher_.pids();
  ASSERT_EQ(pids.size(), 3U);
  EXPECT_EQ(launcher_.signals_to(pids[0]), k_term_plan);
  EXPECT_EQ(launcher_.signals_to(pids[2]), k_term_plan);
  EXPECT_TRUE(launcher_.signals_to(pids[1]).empty());
  ASSERT_EQ(failures_.size(), 1U);
  EXPECT_EQ(failures_[0].ranks.local_rank, 1);
  EXPECT_EQ(failures_[0].exit.exit_status, 3);
  EXPECT_EQ(rdzv_.failure_reports, 1);
  EXPECT_EQ(rdzv_.barriers, std::vector<bool>{false});
  EXPECT_TRUE(launcher_.subreaper());
}

// A worker asleep in the kernel outlives SIGKILL: no new group starts beside it; the node
// withdraws as an unhealthy node does (exit 3, recorded for the others), without waiting for it.
TEST_F(SupervisorTest, AWorkerThatCannotBeKilledWithdrawsTheNodeInsteadOfRestarting) {
  configure(2, 3);
  int rc = run([&](int round, const std::vector<pid_t>& pids) {
    if (round == 0) {
      launcher_.make_unkillable(pids[0]);
      launcher_.exit_with(pids[1], 1);
    }
  });
  EXPECT_EQ(rc, 3);
  const auto& pids = launcher_.pids();
  ASSERT_EQ(pids.size(), 2U) << "no second group";
  EXPECT_EQ(rdzv_.joins.size(), 1U);
  EXPECT_EQ(launcher_.signals_to(pids[0]), (std::vector<int>{SIGCONT, SIGTERM, SIGKILL}));
  ASSERT_EQ(rdzv_.unhealthy.size(), 1U);
  EXPECT_EQ(rdzv_.unhealthy[0],
            "local rank 0 (rank 0, pid " + std::to_string(pids[0]) +
                ") is still alive 5 s after SIGKILL: state D (uninterruptible sleep), waiting in "
                "the kernel at __refrigerator; it cannot be killed (a hung GPU driver or file "
                "system?)");
  EXPECT_EQ(rdzv_.withdrawals, 1);
  EXPECT_EQ(rdzv_.failure_reports, 1) << "the failure that started the stop was told first";
}

// When the job ends anyway (no restart left), the worker is named and the status is the job's.
TEST_F(SupervisorTest, AWorkerThatCannotBeKilledAtTheEndKeepsTheJobsStatus) {
  configure(2, 0);
  int rc = run([&](int, const std::vector<pid_t>& pids) {
    launcher_.make_unkillable(pids[0]);
    launcher_.exit_with(pids[1], 1);
  });
  EXPECT_EQ(rc, 1);
  EXPECT_TRUE(rdzv_.unhealthy.empty());
  EXPECT_EQ(rdzv_.barriers, std::vector<bool>{false});
}

TEST_F(SupervisorTest, NoStacksAreTakenWithoutTheFlag) {
  configure(3, 0);
  int rc = run([&](int, const std::vector<pid_t>& pids) { launcher_.exit_with(pids[1], 3); });
  EXPECT_EQ(rc, 1);
  EXPECT_TRUE(capture_.captured.empty());
}

TEST_F(SupervisorTest, StacksOfTheRunningWorkersAreTakenBeforeTheyAreStopped) {
  configure(3, 0);
  cfg_.supervision.stacks_on_failure = true;
  capture_.kill_with = SIGABRT;  // what a faulthandler capture does to a Python worker
  int rc = run([&](int, const std::vector<pid_t>& pids) { launcher_.exit_with(pids[1], 3); });
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(capture_.captured, (std::vector<int>{0, 2}));
  EXPECT_EQ(capture_.reasons, std::vector<std::string>{"rank 1 failed (exitcode: 3)"});
  ASSERT_EQ(failures_.size(), 1U);  // the workers the capture ended are not failures
  EXPECT_EQ(failures_[0].ranks.local_rank, 1);
}

TEST_F(SupervisorTest, StacksAreTakenAtEveryFailedAttemptButNotOnASignal) {
  configure(2, 1);
  cfg_.supervision.stacks_on_failure = true;
  int rc = run([&](int round, const std::vector<pid_t>& pids) {
    if (round == 0) {
      launcher_.exit_with(pids[0], 1);
    } else {
      raise_signal(SIGTERM);
    }
  });
  EXPECT_EQ(rc, 128 + SIGTERM);
  EXPECT_EQ(capture_.captured, (std::vector<int>{1}));  // round 1 ended by SIGTERM: none
  EXPECT_EQ(rdzv_.joins.size(), 2U);
}

TEST_F(SupervisorTest, RestartsUntilMaxRestartsAreSpentThenFails) {
  configure(2, 2);
  int rc = run([&](int, const std::vector<pid_t>& pids) { launcher_.kill_with(pids[0], SIGSEGV); });
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(rdzv_.joins, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(launcher_.spawned().size(), 6U);
  EXPECT_EQ(rdzv_.failure_reports, 3);  // after each of the two restarts, and the final one
  ASSERT_EQ(failures_.size(), 1U);
  EXPECT_EQ(failures_[0].exit.signal, SIGSEGV);
  ASSERT_EQ(attempt_failures_.size(), 2U) << "one account before each restart, then the summary";
  for (const auto& attempt : attempt_failures_) {
    ASSERT_EQ(attempt.size(), 1U);
    EXPECT_EQ(attempt[0].exit.signal, SIGSEGV);
    EXPECT_EQ(attempt[0].ranks.local_rank, 0);
  }
  EXPECT_EQ(rdzv_.notes.back().reason, "rank 0 failed (exitcode: -11, SIGSEGV)");
}

TEST_F(SupervisorTest, EachReportCarriesTheFirstFailureAndItsTime) {
  configure(2, 1);
  int rc = run([&](int, const std::vector<pid_t>& pids) { launcher_.exit_with(pids[1], 5); });
  EXPECT_EQ(rc, 1);
  ASSERT_EQ(rdzv_.notes.size(), 2U);
  EXPECT_EQ(rdzv_.notes[0].reason, "rank 1 failed (exitcode: 5)");
  EXPECT_GE(rdzv_.notes[0].at, test::ShiftedClock::wall_start());
  EXPECT_LE(rdzv_.notes[0].at, clock_.wall_now());
  ASSERT_EQ(failures_.size(), 1U);
  EXPECT_GE(failures_[0].when, test::ShiftedClock::wall_start());
  EXPECT_LE(failures_[0].when, clock_.wall_now());
  EXPECT_EQ(rdzv_.exclusion_checks, 1) << "after the restart's report, not the final one";
}

TEST_F(SupervisorTest, ANodeLeftOutWithdrawsAndExitsWithoutClosingTheJob) {
  configure(2, 5);
  rdzv_.exclude_after = 2;
  int rc = run([&](int, const std::vector<pid_t>& pids) { launcher_.exit_with(pids[0], 1); });
  EXPECT_EQ(rc, util::k_exit_excluded);
  EXPECT_EQ(rdzv_.joins.size(), 2U) << "no join after the exclusion";
  EXPECT_EQ(rdzv_.withdrawals, 1);
  EXPECT_EQ(rdzv_.shutdowns, 0) << "the others go on: the run stays open";
  EXPECT_TRUE(rdzv_.barriers.empty());
  for (pid_t pid : launcher_.pids()) {
    EXPECT_FALSE(launcher_.group_alive(pid)) << "pid " << pid;
  }
}

TEST_F(SupervisorTest, SecondAttemptSucceedsAfterOneFailure) {
  configure(2, 3);
  int rc = run([&](int round, const std::vector<pid_t>& pids) {
    launcher_.exit_with(pids[0], round == 0 ? 1 : 0);
    launcher_.exit_with(pids[1], 0);
  });
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(rdzv_.joins, (std::vector<int>{0, 1}));
  EXPECT_EQ(rdzv_.barriers, std::vector<bool>{true});
  EXPECT_EQ(rdzv_.shutdowns, 1);
  EXPECT_TRUE(failures_.empty());
}

TEST_F(SupervisorTest, MembershipChangeRestartsWithoutSpendingARestart) {
  configure(1, 0);
  rdzv_.raise_in_round[0] = RdzvSignal::membership_changed;
  int rc = run([&](int round, const std::vector<pid_t>& pids) {
    if (round == 1) {
      launcher_.exit_with(pids[0], 0);
    }
  });
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(rdzv_.joins, (std::vector<int>{0, 0}));
  EXPECT_EQ(launcher_.signals_to(launcher_.pids()[0]), k_term_plan);
}

TEST_F(SupervisorTest, SignalWhileJoiningExitsWithoutStartingWorkers) {
  configure(2, 3);
  rdzv_.hang_join = true;
  asio::post(ctx_, [] { raise_signal(SIGTERM); });
  int rc = run([](int, const std::vector<pid_t>&) {});
  EXPECT_EQ(rc, 1);
  EXPECT_TRUE(launcher_.spawned().empty());
  EXPECT_EQ(rdzv_.leaves, 1);
  EXPECT_EQ(rdzv_.failure_reports, 0);
}

TEST_F(SupervisorTest, SignalWhileRunningIsForwardedThenTheAgentLeaves) {
  configure(2, 3);
  int rc = run([](int, const std::vector<pid_t>&) { raise_signal(SIGINT); });
  EXPECT_EQ(rc, 128 + SIGINT);
  for (pid_t pid : launcher_.pids()) {
    EXPECT_EQ(launcher_.signals_to(pid), (std::vector<int>{SIGCONT, SIGINT}));
  }
  EXPECT_EQ(rdzv_.joins.size(), 1U);  // no restart after a handled signal
  EXPECT_EQ(rdzv_.leaves, 1);
  EXPECT_TRUE(rdzv_.barriers.empty());
}

TEST_F(SupervisorTest, SignalInTheExitBarrierExitsWithTheSignalNotZero) {
  configure(2, 3);
  rdzv_.hang_barrier = true;
  int rc = run([&](int, const std::vector<pid_t>& pids) {
    for (pid_t pid : pids) {
      launcher_.exit_with(pid, 0);
    }
  });
  EXPECT_EQ(rc, 128 + SIGTERM) << "a job stopped before every node finished did not succeed";
  EXPECT_EQ(rdzv_.barriers, (std::vector<bool>{true}));
  EXPECT_EQ(rdzv_.shutdowns, 0);
}

TEST_F(SupervisorTest, SuccessStillStopsGroupsWithStragglers) {
  configure(2, 0);
  int rc = run([&](int, const std::vector<pid_t>& pids) {
    launcher_.leave_straggler(pids[0]);
    launcher_.exit_with(pids[0], 0);
    launcher_.exit_with(pids[1], 0);
  });
  EXPECT_EQ(rc, 0);
  const auto& pids = launcher_.pids();
  EXPECT_EQ(launcher_.signals_to(pids[0]), k_term_plan);  // the straggler's group
  EXPECT_TRUE(launcher_.signals_to(pids[1]).empty());
  EXPECT_FALSE(launcher_.group_alive(pids[0]));
  EXPECT_EQ(launcher_.forgotten(), pids);
  EXPECT_EQ(rdzv_.barriers, std::vector<bool>{true});
}

TEST_F(SupervisorTest, WorkerIgnoringTheSignalIsKilledAfterTheGrace) {
  configure(2, 0);
  int rc = run([&](int, const std::vector<pid_t>& pids) {
    launcher_.ignore_signals(pids[1]);
    launcher_.exit_with(pids[0], 1);
  });
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(launcher_.signals_to(launcher_.pids()[1]),
            (std::vector<int>{SIGCONT, SIGTERM, SIGKILL}));
  ASSERT_EQ(failures_.size(), 1U);  // the killed worker was stopped, not failed
  EXPECT_EQ(failures_[0].ranks.local_rank, 0);
}

TEST_F(SupervisorTest, SpawnFailureStopsTheWorkersAlreadyStarted) {
  configure(3, 2);
  launcher_.fail_spawn_at(1);
  int rc = run([](int, const std::vector<pid_t>&) { ADD_FAILURE() << "no round may start"; });
  EXPECT_EQ(rc, 1);
  ASSERT_EQ(launcher_.pids().size(), 1U);
  EXPECT_EQ(launcher_.signals_to(launcher_.pids()[0]), k_term_plan);
  EXPECT_EQ(rdzv_.joins.size(), 1U);  // an exec failure is not retried
}

bool has_env(const process::SpawnRequest& req, const std::string& entry) {
  return std::find(req.env.begin(), req.env.end(), entry) != req.env.end();
}

TEST_F(SupervisorTest, ExpiredWatchdogTimerKillsTheWorkerAndCountsARestart) {
  configure(2, 1);
  watchdog_ = &timers_;
  int rc = run([&](int round, const std::vector<pid_t>& pids) {
    if (round == 0) {
      timers_.expire(pids[1], SIGKILL, "step");
      return;
    }
    launcher_.exit_with(pids[0], 0);
    launcher_.exit_with(pids[1], 0);
  });
  EXPECT_EQ(rc, 0);
  const auto& pids = launcher_.pids();
  ASSERT_EQ(pids.size(), 4U);
  EXPECT_EQ(launcher_.signals_to(pids[1]), std::vector<int>{SIGKILL});  // the group, once
  EXPECT_EQ(launcher_.signals_to(pids[0]), k_term_plan);                // stopped for the restart
  EXPECT_EQ(rdzv_.joins, (std::vector<int>{0, 1}));                     // the restart was counted
  EXPECT_EQ(rdzv_.failure_reports, 1);                                  // other nodes learn it
  EXPECT_EQ(watchdog_hits_, (std::vector<std::pair<int, std::string>>{{1, "step"}}));
  EXPECT_EQ(timers_.starts, 2);
  EXPECT_GE(timers_.stops, 2);  // at the restart's stop and at the end
  EXPECT_NE(std::find(timers_.forgotten.begin(), timers_.forgotten.end(), pids[1]),
            timers_.forgotten.end());
  for (const auto& req : launcher_.spawned()) {
    EXPECT_TRUE(has_env(req, "TORCHELASTIC_TIMER_FILE=/fake/watchdog_timer"));
  }
}

TEST_F(SupervisorTest, WatchdogFailureCarriesTheTimersScope) {
  configure(1, 0);
  watchdog_ = &timers_;
  int rc = run([&](int, const std::vector<pid_t>& pids) {
    timers_.expire(pids[0], SIGKILL, "train.py#12");
  });
  EXPECT_EQ(rc, 1);
  ASSERT_EQ(failures_.size(), 1U);
  EXPECT_EQ(failures_[0].exit.signal, SIGKILL);
  EXPECT_EQ(failures_[0].reason, "watchdog timer \"train.py#12\" expired");
}

TEST_F(SupervisorTest, WatchdogIsNotTheReasonWhenTheWorkerSurvivedItsSignal) {
  configure(1, 0);
  watchdog_ = &timers_;
  int rc = run([&](int, const std::vector<pid_t>& pids) {
    launcher_.ignore_signals(pids[0]);  // e.g. a SIGUSR1 handler that dumps stacks
    timers_.expire(pids[0], SIGUSR1, "step");
    launcher_.exit_with(pids[0], 1);
  });
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(launcher_.signals_to(launcher_.pids()[0]), std::vector<int>{SIGUSR1});
  ASSERT_EQ(failures_.size(), 1U);
  EXPECT_EQ(failures_[0].exit.exit_status, 1);
  EXPECT_EQ(failures_[0].reason, "");
}

TEST_F(SupervisorTest, WatchdogNeverSignalsAPidThatIsNotAWorker) {
  configure(1, 0);
  watchdog_ = &timers_;
  int rc = run([&](int, const std::vector<pid_t>& pids) {
    timers_.expire(pids[0] + 1000, SIGKILL, "stranger");
    launcher_.exit_with(pids[0], 0);
  });
  EXPECT_EQ(rc, 0);
  for (const auto& sent : launcher_.sent()) {
    EXPECT_EQ(sent.pgid, launcher_.pids()[0]);
  }
  EXPECT_TRUE(watchdog_hits_.empty());
}

TEST_F(SupervisorTest, WithoutWatchdogNoTimerFileIsExported) {
  configure(1, 0);
  int rc = run([&](int, const std::vector<pid_t>& pids) { launcher_.exit_with(pids[0], 0); });
  EXPECT_EQ(rc, 0);
  for (const auto& entry : launcher_.spawned().at(0).env) {
    EXPECT_NE(entry.rfind("TORCHELASTIC_TIMER_FILE=", 0), 0U) << entry;
  }
}

// --- Hangs: the stall watchdog, stacks on an expired timer, job-wide reports ---

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_F(SupervisorTest, SilentGroupStallsAndRestartsAfterItsStacksAreTaken) {
  configure(2, 1);
  cfg_.supervision.stall_timeout = 300ms;
  capture_.kill_with = SIGABRT;
  int rc = run([&](int round, const std::vector<pid_t>& pids) {
    if (round == 1) {
      launcher_.exit_with(pids[0], 0);
      launcher_.exit_with(pids[1], 0);
    }
  });
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(capture_.captured, (std::vector<int>{0, 1}));
  ASSERT_EQ(capture_.reasons.size(), 1U);
  EXPECT_TRUE(contains(capture_.reasons[0],
                       "worker group stalled: no output and no file-timer "
                       "request for 0.3 s (--stall-timeout)"))
      << capture_.reasons[0];
  EXPECT_EQ(rdzv_.joins, (std::vector<int>{0, 1}));   // a restart was spent
  EXPECT_EQ(rdzv_.failure_reports, 1);                // the other nodes restart too
  EXPECT_EQ(rdzv_.stack_requests, capture_.reasons);  // ... after answering with their stacks
  EXPECT_EQ(rdzv_.notes.at(0).reason, "worker group stalled");
  EXPECT_EQ(rdzv_.exclusion_checks, 1) << "a stall counts towards max_node_failures";
  ASSERT_EQ(reports_.size(), 1U);
  EXPECT_TRUE(reports_[0].stall);
  EXPECT_EQ(capture_.holds, std::vector<std::chrono::milliseconds>{0ms});  // no other node
}

TEST_F(SupervisorTest, StallWithoutRestartsLeftFailsNamingTheStall) {
  configure(2, 0);
  cfg_.supervision.stall_timeout = 200ms;
  int rc = run([&](int, const std::vector<pid_t>&) {});
  EXPECT_EQ(rc, 1);
  ASSERT_EQ(failures_.size(), 1U);
  EXPECT_EQ(failures_[0].ranks.local_rank, 0);
  EXPECT_TRUE(contains(failures_[0].reason, "worker group stalled")) << failures_[0].reason;
  EXPECT_EQ(launcher_.signals_to(launcher_.pids()[1]), k_term_plan);
}

TEST_F(SupervisorTest, OutputKeepsTheStallWatchdogQuiet) {
  configure(1, 0);
  cfg_.supervision.stall_timeout = 300ms;
  asio::steady_timer chatter(ctx_);
  std::function<void(int)> talk = [&](int left) {
    io_.last = clock_.now();  // the worker printed a line
    if (left == 0) {
      launcher_.exit_with(launcher_.pids()[0], 0);
      return;
    }
    chatter.expires_after(100ms);
    chatter.async_wait([&, left](const boost::system::error_code&) { talk(left - 1); });
  };
  int rc = run([&](int, const std::vector<pid_t>&) { talk(12); });  // 1.2 s of output
  EXPECT_EQ(rc, 0);
  EXPECT_TRUE(capture_.captured.empty());
}

/// --stall-timeout auto as resolve() sets it, with bounds small enough for a test.
void learn_stall_timeout(config::LaunchConfig& cfg) {
  cfg.supervision.stall_auto = config::StallAuto{5.0, 1s, 300ms};
  cfg.supervision.stall_timeout = cfg.supervision.stall_auto->startup;
}

/// Plays a worker that prints every 50 ms, `lines` times, then falls silent (`then` runs).
class Chatter {
 public:
  Chatter(asio::io_context& ctx, const util::Clock& clock, SilentIo& io)
      : timer_(ctx), clock_(clock), io_(io) {}
  void talk(int lines, std::function<void()> then) {
    io_.last = clock_.now();
    if (lines == 0) {
      if (then) {
        then();
      }
      return;
    }
    timer_.expires_after(50ms);
    timer_.async_wait([this, lines, then = std::move(then)](const boost::system::error_code&) {
      talk(lines - 1, then);
    });
  }

 private:
  asio::steady_timer timer_;
  const util::Clock& clock_;
  SilentIo& io_;
};

TEST_F(SupervisorTest, AutoStallLearnsTheGapsThenStopsASilentGroup) {
  configure(2, 0);
  learn_stall_timeout(cfg_);
  Chatter chatter(ctx_, clock_, io_);
  int rc = run([&](int, const std::vector<pid_t>&) { chatter.talk(30, nullptr); });  // 1.5 s
  EXPECT_EQ(rc, 1);
  ASSERT_EQ(failures_.size(), 1U);
  const auto& why = failures_[0].reason;
  EXPECT_TRUE(contains(why, "worker group stalled: no output and no file-timer request for "))
      << why;
  EXPECT_TRUE(contains(why, " of healthy running: ")) << why;
  EXPECT_TRUE(contains(why, "(--stall-timeout auto: ")) << why;
  EXPECT_FALSE(contains(why, "start-up bound")) << "it stalled on the learned value: " << why;
  ASSERT_EQ(capture_.reasons.size(), 1U);  // every rank's stack first, as for a fixed timeout
  ASSERT_GE(stall_changes_.size(), 2U);
  EXPECT_EQ(stall_changes_.front().first, 1s);
  EXPECT_TRUE(contains(stall_changes_.front().second, "until the first progress"));
  EXPECT_LT(stall_changes_.back().first, 1s) << stall_changes_.back().second;
}

TEST_F(SupervisorTest, AutoStallKeepsWhatItLearnedAcrossARestart) {
  configure(1, 1);
  learn_stall_timeout(cfg_);
  Chatter chatter(ctx_, clock_, io_);
  std::size_t changes_before_restart = 0;
  int rc = run([&](int round, const std::vector<pid_t>& pids) {
    if (round == 0) {
      chatter.talk(30, nullptr);  // learns, then stalls
      return;
    }
    changes_before_restart = stall_changes_.size();
    chatter.talk(4, [&, pid = pids[0]] { launcher_.exit_with(pid, 0); });
  });
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(rdzv_.joins, (std::vector<int>{0, 1}));
  ASSERT_GT(stall_changes_.size(), changes_before_restart);
  for (auto i = changes_before_restart; i < stall_changes_.size(); ++i) {
    EXPECT_FALSE(contains(stall_changes_[i].second, "until 1 s of healthy running"))
        << "the restart forgot what was learned: " << stall_changes_[i].second;
  }
}

TEST_F(SupervisorTest, ExpiredTimerTakesEveryStackBeforeItsSignal) {
  configure(2, 0);
  watchdog_ = &timers_;
  capture_.kill_with = SIGABRT;  // faulthandler: the capture itself ends the workers ...
  int rc = run([&](int, const std::vector<pid_t>& pids) { timers_.expire(pids[1], SIGKILL, "s"); });
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(capture_.captured, (std::vector<int>{0, 1}));
  EXPECT_EQ(capture_.kept_running, std::vector<int>{1});  // ... but not the timer's worker
  EXPECT_EQ(capture_.reasons, std::vector<std::string>{"watchdog timer \"s\" expired for rank 1"});
  ASSERT_EQ(failures_.size(), 1U);  // only the expired one; the others were captured
  EXPECT_EQ(failures_[0].ranks.local_rank, 1);
  EXPECT_EQ(failures_[0].exit.signal, SIGKILL);  // its own timer's signal, as under torchrun
  EXPECT_EQ(failures_[0].reason, "watchdog timer \"s\" expired");
}

TEST_F(SupervisorTest, PeersRequestIsAnsweredAndTheRoundGoesOn) {
  configure(2, 0);
  rdzv_.raise_in_round[0] = RdzvSignal::stacks_requested;  // at once, when the round starts
  asio::steady_timer later(ctx_);
  int rc = run([&](int, const std::vector<pid_t>& pids) {
    later.expires_after(300ms);  // py-spy leaves the workers running: they finish later
    later.async_wait([&, pids](const boost::system::error_code&) {
      launcher_.exit_with(pids[0], 0);
      launcher_.exit_with(pids[1], 0);
    });
  });
  EXPECT_EQ(rc, 0);
  ASSERT_EQ(rdzv_.answers.size(), 1U);
  EXPECT_EQ(rdzv_.answers[0].method, "fake");
  ASSERT_EQ(rdzv_.answers[0].groups.size(), 1U);
  EXPECT_EQ(rdzv_.answers[0].groups[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(capture_.reasons, std::vector<std::string>{"peer stalled (asked by another node)"});
  EXPECT_EQ(capture_.holds, std::vector<std::chrono::milliseconds>{k_freeze_hold});
  EXPECT_TRUE(rdzv_.stack_requests.empty());  // answering never asks the others
}

TEST_F(SupervisorTest, JobWideReportMergesThePeersAndNamesTheSilentOnes) {
  configure(2, 0);
  cfg_.supervision.stall_timeout = 200ms;
  errors::NodeStacks b{"node-b", "fake", {{{2}, "hang (t.py:9)"}, {{3}, "wait (w.py:1)"}}, {}};
  rdzv_.peers.answers.push_back(b);
  rdzv_.peers.missing.push_back("node-c (group rank 2)");
  int rc = run([&](int, const std::vector<pid_t>&) {});
  EXPECT_EQ(rc, 1);
  ASSERT_EQ(reports_.size(), 1U);
  const auto& r = reports_[0];
  EXPECT_EQ(r.nodes, 2);
  EXPECT_EQ(r.missing_nodes, std::vector<std::string>{"node-c (group rank 2)"});
  ASSERT_EQ(r.groups.size(), 2U);
  EXPECT_EQ(r.groups[0].ranks, std::vector<int>{2});  // the odd one first
  EXPECT_EQ(r.groups[1].ranks, (std::vector<int>{0, 1, 3}));
  ASSERT_EQ(rdzv_.answers.size(), 1U);  // its own stacks are published for the others too
  // Every node holds its ranks frozen while the others' watches see the request.
  EXPECT_EQ(capture_.holds, std::vector<std::chrono::milliseconds>{k_freeze_hold});
}

TEST_F(SupervisorTest, CrashLoopReportsCarryTheSignatureAndWhetherTheAttemptWasQuick) {
  configure(2, 1);
  int rc = run([&](int round, const std::vector<pid_t>& pids) {
    if (round == 0) {
      launcher_.exit_with(pids[1], 5);
    } else {
      launcher_.kill_with(pids[0], SIGSEGV);
    }
  });
  EXPECT_EQ(rc, 1);
  ASSERT_EQ(rdzv_.notes.size(), 2U);
  EXPECT_EQ(rdzv_.notes[0].signature, "rank 1: exitcode 5");
  EXPECT_TRUE(rdzv_.notes[0].quick) << "it failed at once, well within the 300 s window";
  EXPECT_EQ(rdzv_.notes[1].signature, "rank 0: SIGSEGV");
}

TEST_F(SupervisorTest, AnAttemptLongerThanTheWindowMadeProgress) {
  configure(1, 0);
  cfg_.rdzv.rdzv_settings.crash_loop_window = 0ms;
  int rc = run([&](int, const std::vector<pid_t>& pids) { launcher_.exit_with(pids[0], 1); });
  EXPECT_EQ(rc, 1);
  ASSERT_EQ(rdzv_.notes.size(), 1U);
  EXPECT_FALSE(rdzv_.notes[0].quick);
}

TEST_F(SupervisorTest, AJobThatGaveUpExitsDoNotRequeueWithTheLastAttemptsFailure) {
  configure(2, 10);
  rdzv_.give_up_at_join = 2;
  int rc = run([&](int, const std::vector<pid_t>& pids) { launcher_.exit_with(pids[1], 7); });
  EXPECT_EQ(rc, util::k_exit_do_not_requeue);
  EXPECT_EQ(rdzv_.joins.size(), 3U);
  EXPECT_EQ(gave_up_, std::vector<std::string>{"stopped: a crash loop"});
  ASSERT_EQ(failures_.size(), 1U) << "the last attempt's failure is the summary";
  EXPECT_EQ(failures_[0].ranks.local_rank, 1);
  EXPECT_TRUE(rdzv_.barriers.empty()) << "the run is closed already: no exit barrier";
}

TEST_F(SupervisorTest, TheRoundsRestartCountIsTheBudget) {
  configure(1, 3);
  rdzv_.job_restarts = {{0, 3}};  // this agent rejoined a job that spent its restarts
  int rc = run([&](int, const std::vector<pid_t>& pids) { launcher_.exit_with(pids[0], 1); });
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(rdzv_.joins.size(), 1U) << "no restart past the job's --max-restarts";
}

}  // namespace
}  // namespace ddprun::agent
