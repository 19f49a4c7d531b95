// The node health checks' decisions: what a run of --health-check says, and the wait for the
// GPUs' memory after a group stopped (time points given, as a fake clock would).

#include "ddprun/agent/health_check.hpp"

#include <gtest/gtest.h>

namespace ddprun::agent {
namespace {

using namespace std::chrono_literals;

constexpr std::uint64_t k_mib = 1024 * 1024;

process::ExitInfo exit_status(int status) { return process::ExitInfo{status, 0, false, false}; }

host::GpuMemory gpu(std::size_t index, std::uint64_t used_mib) {
  return host::GpuMemory{index, "GPU-" + std::to_string(index) + "abc", used_mib * k_mib};
}

TEST(HealthVerdict, ExitZeroIsHealthyWhateverItPrinted) {
  auto v = judge_health_check(CheckEnd::exited_with(exit_status(0)), {"ERROR: looks bad"});
  EXPECT_TRUE(v.healthy);
  EXPECT_EQ(v.reason, "");
}

TEST(HealthVerdict, NonZeroExitGivesTheLastLineAndTheStatus) {
  auto v = judge_health_check(CheckEnd::exited_with(exit_status(4)),
                              {"checking GPUs", "GPU 3: ECC errors", "", "  "});
  EXPECT_FALSE(v.healthy);
  EXPECT_EQ(v.reason, "health check failed: GPU 3: ECC errors (exit status 4)");
  EXPECT_EQ(v.lines, (std::vector<std::string>{"checking GPUs", "GPU 3: ECC errors"}));
}

TEST(HealthVerdict, KeepsTheLastFewLinesOnly) {
  std::vector<std::string> tail;
  tail.reserve(12);
  for (int i = 0; i < 12; ++i) {
    tail.push_back("line " + std::to_string(i));
  }
  auto v = judge_health_check(CheckEnd::exited_with(exit_status(1)), tail);
  ASSERT_EQ(v.lines.size(), k_health_tail_lines);
  EXPECT_EQ(v.lines.front(), "line 7");
  EXPECT_EQ(v.lines.back(), "line 11");
}

TEST(HealthVerdict, NamesTheSignalTheTimeoutOrWhyItDidNotStart) {
  auto killed =
      judge_health_check(CheckEnd::exited_with(process::ExitInfo{0, 11, true, false}), {});
  EXPECT_EQ(killed.reason, "health check failed: killed by SIGSEGV");
  auto slow = judge_health_check(CheckEnd::timed_out_after(2500ms), {"probing nvlink"});
  EXPECT_FALSE(slow.healthy);
  EXPECT_EQ(slow.reason,
            "health check failed: probing nvlink (timed out after 2.5 s (--health-check-timeout))");
  auto none = judge_health_check(CheckEnd::not_started_because("exec /bin/sh: no such file"), {});
  EXPECT_FALSE(none.healthy);
  EXPECT_EQ(none.reason, "health check failed: could not start: exec /bin/sh: no such file");
}

TEST(GpuMemoryWait, DoneWhenEveryGpuIsUnderTheTolerance) {
  const util::SteadyTime t0{1h};
  auto step = decide_gpu_wait({gpu(0, 511), gpu(1, 0)}, 512, t0, t0, 50s);
  EXPECT_EQ(step.kind, GpuWaitStep::Kind::done);
  EXPECT_TRUE(step.busy.empty());
  EXPECT_EQ(decide_gpu_wait({}, 512, t0, t0 + 1h, 50s).kind, GpuWaitStep::Kind::done);
}

TEST(GpuMemoryWait, WaitsOnePollAtATimeNeverPastTheBound) {
  const util::SteadyTime t0{1h};
  auto step = decide_gpu_wait({gpu(0, 100), gpu(1, 512)}, 512, t0, t0, 50s);
  EXPECT_EQ(step.kind, GpuWaitStep::Kind::wait);
  EXPECT_EQ(step.busy, (std::vector<host::GpuMemory>{gpu(1, 512)}));
  EXPECT_EQ(step.next, t0 + k_gpu_memory_poll);
  auto late = decide_gpu_wait({gpu(1, 4096)}, 512, t0, t0 + 49900ms, 50s);
  EXPECT_EQ(late.kind, GpuWaitStep::Kind::wait);
  EXPECT_EQ(late.next, t0 + 50s);
}

TEST(GpuMemoryWait, MemoryThatFallsEndsTheWaitAndMemoryThatStaysMakesTheNodeUnhealthy) {
  const util::SteadyTime t0{1h};
  // The clock moves as the supervisor's would: one poll after another.
  util::SteadyTime now = t0;
  std::vector<std::uint64_t> readings = {8192, 4096, 600, 20};
  GpuWaitStep step;
  for (auto used : readings) {
    step = decide_gpu_wait({gpu(0, used)}, 512, t0, now, 50s);
    if (step.kind != GpuWaitStep::Kind::wait) {
      break;
    }
    now = step.next;
  }
  EXPECT_EQ(step.kind, GpuWaitStep::Kind::done);
  EXPECT_EQ(now, t0 + 3 * k_gpu_memory_poll);
  auto stuck = decide_gpu_wait({gpu(0, 4096), gpu(2, 30)}, 512, t0, t0 + 50s, 50s);
  EXPECT_EQ(stuck.kind, GpuWaitStep::Kind::unhealthy);
  EXPECT_EQ(stuck.busy, (std::vector<host::GpuMemory>{gpu(0, 4096)}));
}

TEST(GpuMemoryWait, MessagesNameEachGpuItsMemoryAndTheBounds) {
  EXPECT_EQ(render_gpu(gpu(3, 0)), "GPU 3 (GPU-3abc)");
  EXPECT_EQ(render_gpu(host::GpuMemory{1, "", 0}), "GPU 1");
  EXPECT_EQ(render_gpu_wait_done({gpu(0, 4096), gpu(1, 1024)}, 2500ms, 512),
            "waited 2.5 s for the GPUs' memory to fall under 512 MiB: GPU 0 (GPU-0abc) had "
            "4096 MiB used, GPU 1 (GPU-1abc) had 1024 MiB used");
  EXPECT_EQ(render_gpu_unhealthy({gpu(0, 4096)}, 50s, 512),
            "GPU memory not freed: GPU 0 (GPU-0abc) still has 4096 MiB used after 50 s "
            "(--gpu-memory-wait; tolerance 512 MiB)");
}

}  // namespace
}  // namespace ddprun::agent
