#pragma once
// The stall watchdog of one agent's worker group (--stall-timeout, docs/reliability.md "Hangs"):
// when the group counts as hung, and why.
//
// The group is watched while one of its workers runs and was not asked to stop. Its deadline is
// the latest of the round's start and the workers' last progress (the last byte any worker wrote
// to a stream the agent reads, or the last file-timer request), plus the timeout. With `auto` the
// timeout is the StallEstimator's (stall_estimator.hpp), fed a sample of the last progress every
// sample_interval(); the rendezvous hands it the job's figures (adopt). The supervisor waits for
// events until wake_deadline() and, at a wake-up without events, asks check(). Its only effects
// are its log lines and the `changed` hook.

#include "ddprun/agent/stall_estimator.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/rdzv/stall_figures.hpp"
#include "ddprun/util/clock.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace ddprun::agent {

/// What the watch reads of the running group.
struct GroupProgress {
  bool watched = false;            ///< a worker runs and was not asked to stop
  util::SteadyTime round_started;  ///< when the round's workers started
  util::SteadyTime last;           ///< their last progress (the epoch: none yet)
};

class StallWatch {
 public:
  /// With --stall-timeout auto, the learned timeout changed notably: the value and why.
  using Changed = std::function<void(std::chrono::milliseconds, const std::string&)>;

  /// Reads `options` (stall_timeout, stall_auto), which must outlive it.
  StallWatch(const config::SupervisorOptions& options, std::string role, const util::Clock& clock,
             Changed changed);

  /// The timeout that applies now (0: off); with `auto`, the learned one.
  std::chrono::milliseconds timeout() const;
  /// With `auto`, what this node learned (merged with the job's); nullopt otherwise.
  std::optional<rdzv::StallFigures> figures() const;
  /// The job's figures, the maximum over the round's members (ignored without `auto`).
  void adopt(const rdzv::StallFigures& job);

  /// A round's workers started at `t`: the previous round's stall is forgotten.
  void round_started(util::SteadyTime t);
  /// When the group of `p` counts as stalled (max: not watched, or no timeout).
  util::SteadyTime deadline(const GroupProgress& p) const;
  /// When the supervisor must look again: deadline(), or with `auto` the next sample if sooner.
  util::SteadyTime wake_deadline(const GroupProgress& p) const;
  /// At a wake-up without events: learns from `p` (auto), then whether the group stalled (the
  /// output may have come in since the deadline was set). When it did, reason() says why (also
  /// logged as an error).
  bool check(const GroupProgress& p);

  /// Why the current round stalled ("worker group stalled: no output and no file-timer request
  /// for 600 s (--stall-timeout)"), "" when it did not.
  const std::string& reason() const { return reason_; }
  std::chrono::system_clock::time_point stalled_at() const { return stalled_at_; }

 private:
  std::string render_reason(const GroupProgress& p) const;
  void note_timeout();

  const config::SupervisorOptions& options_;
  std::string role_;
  const util::Clock& clock_;
  Changed changed_;
  std::optional<StallEstimator> estimator_;
  std::optional<StallTimeout> logged_;  ///< the value last logged (auto)
  util::SteadyTime next_sample_{};
  std::string reason_;
  std::chrono::system_clock::time_point stalled_at_{};
};

}  // namespace ddprun::agent
