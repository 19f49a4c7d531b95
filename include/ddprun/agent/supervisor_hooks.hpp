#pragma once
// SupervisorHooks: what the supervisor tells whoever watches it (the events file, the log's
// summary, tests). Every hook is optional.

#include "ddprun/agent/group_workers.hpp"
#include "ddprun/agent/policy.hpp"
#include "ddprun/agent/seams.hpp"
#include "ddprun/process/exit_info.hpp"

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace ddprun::agent {

/// Lifecycle notifications (the events file, tests). All optional.
struct SupervisorHooks {
  std::function<void(const Round&, const std::vector<pid_t>&)> workers_started;
  std::function<void(const WorkerRanks&, pid_t, const process::ExitInfo&)> worker_exited;
  std::function<void(Outcome, Step, int restarts_left)> round_ended;
  std::function<void(const std::vector<WorkerFailure>&)> failed;  ///< final failure report
  /// The job stopped because restarting would not help (a crash loop): why, before `failed`.
  std::function<void(const std::string& reason)> gave_up;
  /// Workers failed and the group restarts (a restart is left): what failed, for the log.
  std::function<void(const std::vector<WorkerFailure>&)> attempt_failed;
  /// A worker's file timer ran out; its signal is being sent.
  std::function<void(const WorkerRanks&, const TimerExpiry&)> watchdog_expired;
  /// Stacks were taken (a stall, an expired timer, a failure with --stacks-on-failure, or a
  /// peer's request): this node's, or the whole job's when this node asked.
  std::function<void(const StackReport&)> stacks_taken;
  /// With --stall-timeout auto: the timeout changed notably (stall_estimator.hpp); `why` says
  /// how it came about ("--stall-timeout auto: 5 × 58 s; longest gap in ...").
  std::function<void(std::chrono::milliseconds timeout, const std::string& why)>
      stall_timeout_changed;
  /// This node failed its health checks (health_check.hpp) and withdraws: the one-line reason
  /// and the check's last output lines.
  std::function<void(const std::string&, const std::vector<std::string>&)> unhealthy;
};

}  // namespace ddprun::agent
