#pragma once
// Workers that outlive SIGKILL. A process asleep in the kernel (state D: a GPU driver hung after
// an Xid error, a dead NFS server) takes no signal until it wakes, so stopping its group never
// ends: torch 2.14's agent then stops restarting and bounds its wait; ddprun names each such
// worker (pid, state, kernel wait channel), and the node withdraws from the job as an unhealthy
// node does (exit 3: the others go on, or a spare takes its place), without waiting for it.
// Pure: the supervisor reads the state through the launcher seam.

#include "ddprun/agent/health_check.hpp"
#include "ddprun/agent/worker_spec.hpp"
#include "ddprun/process/exit_info.hpp"

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace ddprun::agent {

/// A worker still alive k_kill_wait after SIGKILL, and what the kernel said of it then.
struct StuckWorker {
  WorkerRanks ranks;
  pid_t pid = 0;
  process::ProcessState state;
};

/// "local rank 1 (rank 3, pid 4242) is still alive 5 s after SIGKILL: state D (uninterruptible
/// sleep), waiting in the kernel at __refrigerator; it cannot be killed (a hung GPU driver or
/// file system?)".
std::string render_stuck(const StuckWorker& worker, std::chrono::milliseconds bound);

/// The node's verdict: unhealthy, the reason naming the first stuck worker (and how many more;
/// the supervisor logs each one as it finds it).
HealthVerdict unkillable_verdict(const std::vector<StuckWorker>& stuck,
                                 std::chrono::milliseconds bound);

}  // namespace ddprun::agent
