// A worker that cannot be killed (issue #39 §3), made for real: the worker moves itself into a
// cgroup v1 freezer cgroup and freezes it, so it sleeps in the kernel (state D) and a SIGKILL
// stays pending until the cgroup is thawed, as a worker stuck in a hung GPU driver would. Its
// rank 1 fails, the group is stopped for a restart, the frozen worker outlives SIGKILL: the agent
// names it in one line and withdraws from the job (exit 3) instead of hanging or starting a new
// group beside it. The cgroup is thawed and removed on every path out of the test. Skipped where
// the freezer hierarchy cannot be written (no root, cgroup v2 only).

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/subprocess.hpp"

using namespace ddprun::test;
namespace fs = std::filesystem;

namespace {

constexpr const char* k_freezer = "/sys/fs/cgroup/freezer";

/// A freezer cgroup of this test's own; thawed and removed when it goes (bounded).
class FreezerCgroup {
 public:
  FreezerCgroup() : path_(std::string(k_freezer) + "/ddprun-test-" + std::to_string(::getpid())) {
    std::error_code ec;
    made_ = fs::create_directory(path_, ec) && fs::exists(path_ + "/freezer.state");
  }
  ~FreezerCgroup() {
    if (!made_) {
      return;
    }
    std::ofstream(path_ + "/freezer.state") << "THAWED";
    for (int i = 0; i < 100; ++i) {  // the thawed processes die of their pending SIGKILL
      std::error_code ec;
      if (fs::remove(path_, ec) || !fs::exists(path_)) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  FreezerCgroup(const FreezerCgroup&) = delete;
  FreezerCgroup& operator=(const FreezerCgroup&) = delete;

  bool made() const { return made_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool made_ = false;
};

}  // namespace

TEST(UnkillableE2E, AFrozenWorkerIsNamedAndTheAgentWithdrawsWithExitThree) {
  FreezerCgroup cgroup;
  if (!cgroup.made()) {
    GTEST_SKIP() << "cannot make a cgroup under " << k_freezer << " (needs root and cgroup v1)";
  }
  const auto dir = make_temp_dir("ddprun-frozen-");
  // Rank 0 leaves the agent's pipes (a frozen process would hold them open), then freezes
  // itself; rank 1 fails once rank 0 is frozen. ($$$$: the worker's arguments are a template,
  // as under torchrun, where $$ is a $.)
  const std::string script = "if [ \"$RANK\" = 0 ]; then exec >/dev/null 2>&1; echo $$$$ > " +
                             cgroup.path() + "/cgroup.procs && echo FROZEN > " + cgroup.path() +
                             "/freezer.state; sleep 60; else sleep 2; exit 1; fi";
  auto r =
      run({ddprun_bin(), "--nproc_per_node", "2", "--max_restarts", "3", "--shutdown-timeout", "1",
           "--events-file", dir + "/events.jsonl", "--no_python", "/bin/sh", "-c", script},
          RunOptions{{}, {}, "", std::chrono::seconds(90)});
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("local rank 0 (rank 0, pid "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(") is still alive 5 s after SIGKILL: state D (uninterruptible sleep)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("this node is unhealthy: local rank 0"), std::string::npos) << r.err;
  const auto events = read_file(dir + "/events.jsonl");
  const auto first = events.find("\"event\":\"workers_started\"");
  ASSERT_NE(first, std::string::npos) << events;
  EXPECT_EQ(events.find("\"event\":\"workers_started\"", first + 1), std::string::npos)
      << "no second group beside the frozen worker: " << events;
  EXPECT_NE(events.find("\"event\":\"unhealthy\""), std::string::npos) << events;
  EXPECT_NE(events.find("\"state\":\"EXCLUDED\""), std::string::npos) << events;
}
