#pragma once
// One worker of the current round as the supervisor tracks it: a small state machine, pure.
//
//   running --request_stop()--> stopping
//   running  --ended()--------> exited    (it ended on its own: a failure unless it succeeded)
//   stopping --ended()--------> stopped   (the agent asked: no failure of its own)
//
// A file timer that ran out (expire()) makes the worker's end a failure whoever ended it, and
// is the failure's cause when the worker died of the timer's signal, or of its stack being
// taken for the timer (a faulthandler dump ends the worker).

#include "ddprun/agent/worker_spec.hpp"
#include "ddprun/process/exit_info.hpp"

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

namespace ddprun::agent {

enum class WorkerState { running, stopping, exited, stopped };

/// A worker's file timer ran out: why, the signal the timer asked for, and whether its
/// stack was taken because of it.
struct TimerCause {
  std::string reason;  ///< "watchdog timer \"step\" expired"
  int signal = 0;
  bool captured = false;
};

class WorkerRecord {
 public:
  WorkerRecord(WorkerRanks ranks, pid_t pid) : ranks_(ranks), pid_(pid) {}

  const WorkerRanks& ranks() const { return ranks_; }
  pid_t pid() const { return pid_; }
  WorkerState state() const { return state_; }
  /// Running or stopping: the process has not been reaped.
  bool alive() const { return state_ == WorkerState::running || state_ == WorkerState::stopping; }
  /// Running and not asked to stop: what the stall watchdog watches.
  bool watched() const { return state_ == WorkerState::running; }
  const process::ExitInfo& exit() const { return exit_; }
  std::chrono::system_clock::time_point exit_time() const { return exit_time_; }
  const std::optional<TimerCause>& timer() const { return timer_; }

  /// The agent asked it to stop (a group stop, or a capture that may end it).
  void request_stop() {
    if (state_ == WorkerState::running) {
      state_ = WorkerState::stopping;
    }
  }
  /// Its file timer ran out (`reason`, `signal`); the end that follows is a failure.
  void expire(std::string reason, int signal) { timer_ = TimerCause{std::move(reason), signal}; }
  /// Its stack was taken because of its timer.
  void mark_captured() {
    if (timer_) {
      timer_->captured = true;
    }
  }
  /// It was reaped; true when this end is a failure of its own (it ended badly on its own, or
  /// after its timer ran out). A worker already reaped is left as it is (false).
  bool ended(const process::ExitInfo& exit, std::chrono::system_clock::time_point when) {
    if (!alive()) {
      return false;
    }
    const bool asked = state_ == WorkerState::stopping;
    state_ = asked ? WorkerState::stopped : WorkerState::exited;
    exit_ = exit;
    exit_time_ = when;
    return !exit.success() && (!asked || timer_.has_value());
  }
  /// The timer is the failure's cause ("" when it is not): it died of the timer's signal, or
  /// of the capture taken for the timer.
  std::string timer_reason() const {
    const bool by_timer =
        timer_ && exit_.signaled && (exit_.signal == timer_->signal || timer_->captured);
    return by_timer ? timer_->reason : std::string();
  }

 private:
  WorkerRanks ranks_;
  pid_t pid_ = 0;
  WorkerState state_ = WorkerState::running;
  process::ExitInfo exit_;
  std::chrono::system_clock::time_point exit_time_;
  std::optional<TimerCause> timer_;
};

}  // namespace ddprun::agent
