#pragma once
// Node health checks before each round (docs/reliability.md, "Node health checks"), the pure
// part: what a run of --health-check says about the node, and the wait for the GPUs' memory
// after a group stopped (--gpu-memory-wait). The supervisor runs them (supervisor_health.cpp)
// through HealthCommand (health_command.hpp) and host::GpuMemorySource. Not to be confused with
// health.hpp, the TORCHELASTIC_HEALTH_CHECK_PORT endpoint.

#include "ddprun/host/gpus.hpp"
#include "ddprun/process/exit_info.hpp"
#include "ddprun/util/clock.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ddprun::agent {

/// Lines of the command's output kept as the reason (the last ones, stdout and stderr mixed).
inline constexpr std::size_t k_health_tail_lines = 5;
/// How often the used memory of the GPUs is read while waiting for it to fall.
inline constexpr std::chrono::milliseconds k_gpu_memory_poll{500};

/// How one run of the health command ended.
struct CheckEnd {
  enum class How { exited, timed_out, not_started } how = How::exited;
  process::ExitInfo exit;                ///< exited: its status
  std::string error;                     ///< not_started: why ("exec /bin/sh: ...")
  std::chrono::milliseconds timeout{0};  ///< timed_out: the bound it hit

  static CheckEnd exited_with(process::ExitInfo exit) {
    CheckEnd e;
    e.exit = exit;
    return e;
  }
  static CheckEnd timed_out_after(std::chrono::milliseconds bound) {
    CheckEnd e;
    e.how = How::timed_out;
    e.timeout = bound;
    return e;
  }
  static CheckEnd not_started_because(std::string why) {
    CheckEnd e;
    e.how = How::not_started;
    e.error = std::move(why);
    return e;
  }
};

/// What a check says about this node.
struct HealthVerdict {
  bool healthy = true;
  /// unhealthy: one line for the others and `ddprun status`, "health check failed: <last
  /// output line> (exit status 1)".
  std::string reason;
  std::vector<std::string> lines;  ///< the command's last output lines, for the log and events
};

/// Healthy only when the command exited 0. `tail` is its output's last lines (any number; the
/// last k_health_tail_lines non-blank ones are kept).
HealthVerdict judge_health_check(const CheckEnd& end, const std::vector<std::string>& tail);

/// One GPU whose memory is still in use.
struct GpuBusy {
  host::GpuMemory gpu;
  std::chrono::milliseconds waited{0};  ///< since the wait began
};

/// The next step of the wait for the GPUs' memory to fall under the tolerance.
struct GpuWaitStep {
  enum class Kind { done, wait, unhealthy } kind = Kind::done;
  std::vector<host::GpuMemory> busy;  ///< the GPUs still above the tolerance
  util::SteadyTime next{};            ///< wait: when to read again
};

/// The policy: done when every GPU is under `tolerance_mib`; unhealthy when one is not and
/// `bound` has passed since `started`; else wait until the next poll (never past the bound).
GpuWaitStep decide_gpu_wait(const std::vector<host::GpuMemory>& now, std::uint64_t tolerance_mib,
                            util::SteadyTime started, util::SteadyTime at,
                            std::chrono::milliseconds bound);

/// "GPU 0 (GPU-1a2b...)": how messages name a GPU.
std::string render_gpu(const host::GpuMemory& gpu);

/// INFO once the memory fell: "waited 2.5 s for the GPUs' memory to fall under 512 MiB: GPU 0
/// (GPU-...) had 4096 MiB used".
std::string render_gpu_wait_done(const std::vector<host::GpuMemory>& first_busy,
                                 std::chrono::milliseconds waited, std::uint64_t tolerance_mib);

/// The unhealthy reason: "GPU memory not freed: GPU 0 (GPU-...) still has 4096 MiB used after
/// 50 s (--gpu-memory-wait; tolerance 512 MiB)".
std::string render_gpu_unhealthy(const std::vector<host::GpuMemory>& busy,
                                 std::chrono::milliseconds bound, std::uint64_t tolerance_mib);

}  // namespace ddprun::agent
