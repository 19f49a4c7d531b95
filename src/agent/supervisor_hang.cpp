// The supervisor's hang handling: the stall watchdog's deadline, and the stack report.
//
// Stall: the group is watched while one of its workers runs and was not asked to stop. Its
// deadline is the latest of the round's start, the last byte any worker wrote to a stream the
// agent reads (WorkerIo::last_output) and the last file-timer request (Watchdog::last_request),
// plus --stall-timeout; monitor() waits for events until then. With `auto` the timeout is the
// StallEstimator's (stall_estimator.hpp), which monitor() feeds a sample of the last progress
// every sample_interval(); the rendezvous hands it the job's figures (adopt_stall_figures).
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

std::chrono::milliseconds Supervisor::stall_timeout() const {
  return stall_est_ ? stall_est_->current().value : cfg_.stall_timeout;
}

std::optional<rdzv::StallFigures> Supervisor::stall_figures() const {
  return stall_est_ ? std::optional(stall_est_->figures()) : std::nullopt;
}

void Supervisor::adopt_stall_figures(const rdzv::StallFigures& job) {
  if (stall_est_) {
    stall_est_->adopt(job);
    note_stall_timeout();
  }
}

util::SteadyTime Supervisor::stall_deadline() const {
  const bool watched = std::any_of(workers_.begin(), workers_.end(),
                                   [](const WorkerRecord& w) { return w.watched(); });
  if (cfg_.stall_timeout.count() <= 0 || !watched) {
    return util::SteadyTime::max();
  }
  return std::max(round_started_, last_progress()) + stall_timeout();
}

/// monitor()'s wake-up: the stall deadline, or with `auto` the next sample if sooner.
util::SteadyTime Supervisor::watch_deadline() const {
  const auto deadline = stall_deadline();
  return stall_est_ && deadline != util::SteadyTime::max() ? std::min(deadline, next_stall_sample_)
                                                           : deadline;
}

/// At a wake-up without events: learns from the latest progress (auto), then whether the
/// group stalled; output may have come in since the deadline was set.
bool Supervisor::found_stall() {
  const auto now = clock_.now();
  if (stall_est_) {
    stall_est_->observe(last_progress());
    next_stall_sample_ = now + stall_est_->sample_interval();
    note_stall_timeout();
  }
  if (now < stall_deadline()) {
    return false;
  }
  stall_ = stall_reason();
  stalled_at_ = clock_.wall_now();
  spdlog::error("[{}] {}", group_.role, stall_);
  return true;
}

void Supervisor::stall_round_started() {
  if (stall_est_) {
    stall_est_->round_started(round_started_);
    next_stall_sample_ = round_started_ + stall_est_->sample_interval();
    note_stall_timeout();
  }
}

/// Logs the learned timeout (and tells the hooks) when it changed notably: not per sample.
void Supervisor::note_stall_timeout() {
  const auto now = stall_est_->current();
  if (stall_logged_ && !is_notable_change(*stall_logged_, now)) {
    return;
  }
  stall_logged_ = now;
  const auto why = stall_est_->explain() + stall_est_->learned_text();
  spdlog::info("[{}] stall timeout: {} ({})", group_.role, render_span(now.value), why);
  if (hooks_.stall_timeout_changed) {
    hooks_.stall_timeout_changed(now.value, why);
  }
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
  const std::string head = "worker group stalled: no output and no file-timer request for ";
  if (!stall_est_) {
    return head + seconds_text(cfg_.stall_timeout) + " s (--stall-timeout)";
  }
  const bool started = last_progress() > round_started_;
  const auto silent = std::chrono::duration_cast<std::chrono::milliseconds>(
      clock_.now() - std::max(round_started_, last_progress()));
  return head + render_span(silent) + (started ? "" : " since the workers started") +
         stall_est_->learned_text() + " (" + stall_est_->explain() + ")";
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
  co_await job_stacks_.answer(std::move(targets), group_.role);
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
                  group_.role, reason, w.ranks().local_rank, w.pid(),
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
