// The supervisor's hang and failure handling: the stall watchdog's input, the stack report,
// and the group's failure for the rendezvous.
//
// Stall: the StallWatch (stall_watch.hpp) decides from the group's progress, which this file
// reads: whether a worker is watched, the round's start, and the last byte any worker wrote to
// a stream the agent reads (WorkerIo::last_output) or the last file-timer request
// (Watchdog::last_request); monitor() waits for events until its wake-up deadline.
//
// Expired file timer: when its signal will end the worker, every rank's stack is taken first
// (handle_timer_expired), the worker itself left to that signal.
//
// Stacks, at most once per round, through JobStacks (job_stacks.hpp: the asking, taking,
// merging and printing); this file chooses the targets, the round's running workers, and
// marks them stopping first, since taking a stack may end a worker.
//
// Failure: which failure came first, its reason and signature (group_workers.hpp), and whether
// the attempt was short of --crash-loop-window (it made no progress), for the rendezvous to
// tell a crash loop.

#include "ddprun/agent/supervisor.hpp"
#include "ddprun/rdzv/crash_loop.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace ddprun::agent {

GroupProgress Supervisor::progress() const {
  return GroupProgress{workers_.any_watched(), round_started_, last_progress()};
}

util::SteadyTime Supervisor::last_progress() const {
  const auto* watchdog = seams_.watchdog;
  const auto requested = watchdog != nullptr ? watchdog->last_request() : util::SteadyTime{};
  return std::max(seams_.io.last_output(), requested);
}

HealthSnapshot Supervisor::health() const {
  HealthSnapshot s{std::string(to_string(phase_)), restart_count_, workers_.running(),
                   std::nullopt};
  if (phase_ == GroupPhase::running) {
    const auto since = seams_.clock.now() - std::max(round_started_, last_progress());
    s.seconds_since_progress = std::chrono::duration<double>(since).count();
  }
  return s;
}

asio::awaitable<void> Supervisor::take_stacks(std::string reason, bool stall, pid_t keep_running) {
  if (job_stacks_.can_take()) {
    co_await job_stacks_.take(workers_.stack_targets(keep_running), std::move(reason), stall);
  }
}

/// The worker's timer ran out. Its stack and the others' are taken first when the timer's
/// signal ends it (the group then fails); a signal it catches (a handler dumping its own
/// state) is sent alone, as torchrun does. The workers are not added or removed while a round
/// runs, so the record stays valid across the capture.
asio::awaitable<void> Supervisor::on_timer_expired(const TimerExpired& ev) {
  if (auto* found = workers_.alive(ev.pid)) {
    auto& w = *found;
    const std::string reason = "watchdog timer \"" + ev.scope + "\" expired";
    w.expire(reason, ev.signal);
    const bool capture = job_stacks_.can_take() && seams_.launcher.signal_ends(w.pid(), ev.signal);
    spdlog::error("[{}] {} for local_rank {} (pid {}); {}sending {} to its process group",
                  plan_.group.role, reason, w.ranks().local_rank, w.pid(),
                  capture ? "taking the stacks, then " : "", process::signal_name(ev.signal));
    if (hooks_.watchdog_expired) {
      hooks_.watchdog_expired(w.ranks(), TimerExpiry{ev.pid, ev.signal, ev.scope});
    }
    if (capture) {
      w.mark_captured();
      // The capture leaves this worker to its timer's signal: it dies of it, as under torchrun.
      co_await take_stacks(reason + " for rank " + std::to_string(w.ranks().rank), false, w.pid());
    }
    if (w.alive()) {
      seams_.launcher.signal_group(w.pid(), ev.signal);
    }
    co_return;
  }
  spdlog::warn(
      "watchdog timer \"{}\" of pid {} expired, but pid {} is not a running worker "
      "of this agent; not signalled",
      ev.scope, ev.pid, ev.pid);
}

/// This group's failure for the rendezvous: its first worker's failure, or the stall, with
/// how it failed (to tell a crash loop) and whether the attempt was short of the window.
FailureNote Supervisor::failure_note() const {
  const auto& clock = seams_.clock;
  const bool quick = clock.now() - round_started_ < plan_.rdzv.crash_loop_window;
  if (const auto* w = workers_.first_failure()) {
    return FailureNote{w->exit_time(), workers_.failure_reason(), failure_signature(*w, seams_.io),
                       quick};
  }
  if (!stall_.reason().empty()) {
    return FailureNote{stall_.stalled_at(), "worker group stalled", "worker group stalled", quick};
  }
  return FailureNote{clock.wall_now(), workers_.failure_reason()};  // a peer's: no claim here
}

/// Tells the rendezvous this group failed. While the crash-loop stop is off, returns the hint
/// naming a streak of identical quick failures it would have stopped (crash_loop.hpp).
asio::awaitable<std::optional<std::string>> Supervisor::report_group_failure() {
  const auto streak = co_await seams_.rdzv.report_failure(failure_note());
  co_return rdzv::render_crash_loop_hint(streak, plan_.rdzv,
                                         util::wall_ms(seams_.clock.wall_now()));
}

/// The round's failures for the report; a stall stands for its group's when none failed.
std::vector<WorkerFailure> Supervisor::failures() const {
  return workers_.failures(seams_.io, stall_.reason());
}

}  // namespace ddprun::agent
