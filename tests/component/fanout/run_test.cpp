// run_plan's stop escalation with real children: it is the agent's stop plan, so a node whose
// launcher is stopped (SIGSTOP, e.g. a suspended job step) is woken with SIGCONT before the
// SIGTERM and handles it, instead of sitting out the whole grace until SIGKILL.

#include "ddprun/fanout/run.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ddprun::fanout {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

/// Runs `fn` with our fd 1 going to `path`.
template <typename Fn>
int with_stdout_to(const fs::path& path, Fn fn) {
  (void)std::fflush(stdout);
  int saved = dup(1);
  int file = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  dup2(file, 1);
  close(file);
  int rc = fn();
  dup2(saved, 1);
  close(saved);
  return rc;
}

std::string read_all(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(FanoutRun, AStoppedNodeIsContinuedBeforeTheSignal) {
  const fs::path dir = fs::temp_directory_path() / ("ddprun-fanout-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string pid_file = (dir / "a.pid").string();
  // Node a stops itself (then sleeps, so only the signal ends it); node b fails once a is seen
  // stopped (bounded: 20 s of polling).
  const std::string a = "trap 'echo got-term; exit 0' TERM; echo $$ > " + pid_file + ".tmp; mv " +
                        pid_file + ".tmp " + pid_file + "; kill -STOP $$; sleep 30";
  const std::string b = "for i in $(seq 400); do [ -s " + pid_file +
                        " ] && grep -q '^State:.*stopped' /proc/$(cat " + pid_file +
                        ")/status && exit 3; sleep 0.05; done; exit 4";
  Plan plan{Via::pbsdsh, {Node{"a", 0, {"/bin/sh", "-c", a}}, Node{"b", 1, {"/bin/sh", "-c", b}}}};
  // A grace long enough that only SIGCONT can make node a print before SIGKILL.
  const Stopping stopping{60s, {SIGTERM}};
  const fs::path out = dir / "out.txt";
  int rc = with_stdout_to(out, [&] { return run_plan(plan, util::Env{}, stopping); });
  EXPECT_EQ(rc, 3) << "node b did not see node a stopped";
  EXPECT_NE(read_all(out).find("[a] got-term"), std::string::npos) << read_all(out);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ddprun::fanout
