// The guardian with real processes: a forked "agent" starts a guardian and one worker group
// (a shell with two sleeping children), then the test SIGKILLs the agent.

#include "ddprun/process/guardian.hpp"

#include "ddprun/process/posix_launcher.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "support/subprocess.hpp"

using namespace ddprun;
using namespace ddprun::process;

namespace {

constexpr auto k_gone = std::chrono::seconds(20);

enum class Mode { guarded, unguarded, guarded_then_forgotten, guardian_closed };

struct FakeAgent {
  pid_t pid = -1;
  pid_t worker_group = -1;
};

[[noreturn]] void agent_main(Mode mode, const std::string& tag, int report_fd) {
  Guardian guardian;
  if (mode != Mode::unguarded) {
    auto started = Guardian::start();
    if (!started) {
      _exit(3);
    }
    guardian = std::move(*started);
  }
  PosixLauncher launcher(&guardian);
  auto pid = launcher.spawn(SpawnRequest{{"/bin/sh", "-c", "sleep 300 & sleep 300 & wait"},
                                         {"PATH=/usr/bin:/bin", tag},
                                         "",
                                         -1,
                                         -1,
                                         {}});
  if (!pid) {
    _exit(4);
  }
  if (mode == Mode::guarded_then_forgotten) {
    launcher.forget_group(*pid);
  }
  if (mode == Mode::guardian_closed) {
    guardian = Guardian{};  // what an agent's normal exit does: the guardian acts at once
  }
  auto n = write(report_fd, &*pid, sizeof *pid);
  (void)n;
  while (true) {
    pause();
  }
}

/// Forks the fake agent and waits until its worker group holds the shell and both sleeps.
FakeAgent start_agent(Mode mode, const std::string& tag) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  FakeAgent agent;
  agent.pid = fork();
  if (agent.pid == 0) {
    close(fds[0]);
    agent_main(mode, tag, fds[1]);
  }
  close(fds[1]);
  EXPECT_EQ(read(fds[0], &agent.worker_group, sizeof agent.worker_group),
            static_cast<ssize_t>(sizeof agent.worker_group));
  close(fds[0]);
  return agent;
}

bool settled_with(const std::string& tag, std::size_t n) {
  return test::eventually([&] { return test::processes_with_env(tag).size() == n; }, k_gone);
}

void kill_agent(const FakeAgent& agent) {
  kill(agent.pid, SIGKILL);
  int status = 0;
  EXPECT_EQ(waitpid(agent.pid, &status, 0), agent.pid);
}

void cleanup(const std::string& tag) {
  for (auto pid : test::processes_with_env(tag)) {
    kill(pid, SIGKILL);
  }
}

}  // namespace

TEST(Guardian, KillsTheWorkersGrandchildrenWhenTheAgentIsKilled) {
  auto tag = test::unique_tag();
  auto agent = start_agent(Mode::guarded, tag);
  ASSERT_GT(agent.worker_group, 1);
  ASSERT_TRUE(settled_with(tag, 3u)) << "shell + 2 sleeps expected";
  kill_agent(agent);
  EXPECT_TRUE(test::eventually([&] { return test::processes_with_env(tag).empty(); }, k_gone))
      << test::processes_with_env(tag).size() << " processes left";
  cleanup(tag);
}

TEST(Guardian, WithoutItTheGrandchildrenSurvive) {
  // The control for the test above: PDEATHSIG alone takes only the worker shell.
  auto tag = test::unique_tag();
  auto agent = start_agent(Mode::unguarded, tag);
  ASSERT_TRUE(settled_with(tag, 3u));
  kill_agent(agent);
  EXPECT_TRUE(settled_with(tag, 2u)) << "the two sleeps should be orphaned";
  cleanup(tag);
}

TEST(Guardian, AForgottenGroupIsLeftAlone) {
  auto tag = test::unique_tag();
  auto agent = start_agent(Mode::guarded_then_forgotten, tag);
  ASSERT_TRUE(settled_with(tag, 3u));
  kill_agent(agent);
  EXPECT_TRUE(settled_with(tag, 2u));
  cleanup(tag);
}

TEST(Guardian, ClosingTheHandleKillsWhatIsStillWatched) {
  auto tag = test::unique_tag();
  auto agent = start_agent(Mode::guardian_closed, tag);
  // The agent is alive and paused; only its worker group must go.
  EXPECT_TRUE(test::eventually(
      [&] {
        auto left = test::processes_with_env(tag);
        return left.empty();
      },
      k_gone));
  EXPECT_EQ(kill(agent.pid, 0), 0);
  kill_agent(agent);
  cleanup(tag);
}
