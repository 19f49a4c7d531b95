// The supervisor's hang handling: the stall watchdog's deadline, and the stack report.
//
// Stall: the group is watched while one of its workers runs and was not asked to stop. Its
// deadline is the latest of the round's start, the last byte any worker wrote to a stream the
// agent reads (WorkerIo::last_output) and the last file-timer request (Watchdog::last_request),
// plus --stall-timeout; monitor() waits for events until then.
//
// Expired file timer: when its signal will end the worker, every rank's stack is taken first
// (handle_timer_expired), the worker itself left to that signal.
//
// Stacks, at most once per round, through JobStacks (job_stacks.hpp: the asking, taking,
// merging and printing); this file chooses the targets, the round's running workers, and
// marks them stopping first, since taking a stack may end a worker.

#include "ddprun/agent/supervisor.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace ddprun::agent {

namespace {

std::string seconds_text(std::chrono::milliseconds d) {
  return fmt::format("{:g}", static_cast<double>(d.count()) / 1000.0);
}

}  // namespace

util::SteadyTime Supervisor::stall_deadline() const {
  const bool watched = std::any_of(workers_.begin(), workers_.end(),
                                   [](const WorkerRecord& w) { return w.watched(); });
  if (cfg_.stall_timeout.count() <= 0 || !watched) {
    return util::SteadyTime::max();
  }
  return std::max(round_started_, last_progress()) + cfg_.stall_timeout;
}

util::SteadyTime Supervisor::last_progress() const {
  const auto requested = watchdog_ != nullptr ? watchdog_->last_request() : util::SteadyTime{};
  return std::max(io_.last_output(), requested);
}

HealthSnapshot Supervisor::health() const {
  HealthSnapshot s{phase_, restart_count_, 0, std::nullopt};
  for (const auto& w : workers_) {
    s.workers_running += w.alive() ? 1 : 0;
  }
  if (phase_ == "running") {
    const auto since = clock_.now() - std::max(round_started_, last_progress());
    s.seconds_since_progress = std::chrono::duration<double>(since).count();
  }
  return s;
}

std::string Supervisor::stall_reason() const {
  return "worker group stalled: no output and no file-timer request for " +
         seconds_text(cfg_.stall_timeout) + " s (--stall-timeout)";
}

std::vector<StackTarget> Supervisor::stack_targets(pid_t keep_running) {
  std::vector<StackTarget> targets;
  for (auto& w : workers_) {
    if (w.alive()) {
      w.request_stop();
      targets.push_back(StackTarget{w.ranks(), w.pid(), w.pid() == keep_running});
    }
  }
  return targets;
}

asio::awaitable<void> Supervisor::take_stacks(std::string reason, bool stall, pid_t keep_running) {
  if (job_stacks_.can_take()) {
    co_await job_stacks_.take(stack_targets(keep_running), std::move(reason), stall);
  }
}

/// Another node asks: this node's stacks (taken once per round) go back to it.
asio::awaitable<void> Supervisor::answer_stacks_request() {
  auto targets = job_stacks_.can_take() ? stack_targets() : std::vector<StackTarget>{};
  co_await job_stacks_.answer(std::move(targets), cfg_.role);
}

/// The worker's timer ran out. Its stack and the others' are taken first when the timer's
/// signal ends it (the group then fails); a signal it catches (a handler dumping its own
/// state) is sent alone, as torchrun does. workers_ is not resized while a round runs, so the
/// index stays valid across the capture.
asio::awaitable<void> Supervisor::handle_timer_expired(Event ev) {
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    if (workers_[i].pid() != ev.pid || !workers_[i].alive()) {
      continue;
    }
    auto& w = workers_[i];
    const std::string reason = "watchdog timer \"" + ev.scope + "\" expired";
    w.expire(reason, ev.signal);
    const bool capture = job_stacks_.can_take() && launcher_.signal_ends(w.pid(), ev.signal);
    spdlog::error("[{}] {} for local_rank {} (pid {}); {}sending {} to its process group",
                  cfg_.role, reason, w.ranks().local_rank, w.pid(),
                  capture ? "taking the stacks, then " : "", process::signal_name(ev.signal));
    if (hooks_.watchdog_expired) {
      hooks_.watchdog_expired(w.ranks(), TimerExpiry{ev.pid, ev.signal, ev.scope});
    }
    if (capture) {
      w.mark_captured();
      // The capture leaves this worker to its timer's signal: it dies of it, as under torchrun.
      co_await take_stacks(reason + " for rank " + std::to_string(w.ranks().rank), false, w.pid());
    }
    if (workers_[i].alive()) {
      launcher_.signal_group(workers_[i].pid(), ev.signal);
    }
    co_return;
  }
  spdlog::warn(
      "watchdog timer \"{}\" of pid {} expired, but pid {} is not a running worker "
      "of this agent; not signalled",
      ev.scope, ev.pid, ev.pid);
}

}  // namespace ddprun::agent
