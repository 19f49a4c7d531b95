// The supervisor's ends of a round and of the agent: stopping a group (escalating signals to
// whole process groups until every group is empty), the health verdict before a join, and
// leaving the job, each bounded and still answering a handled signal.
//
// Rendezvous steps that may wait long (leave, withdraw, the exit barrier) run beside the event
// loop (beside()): children are reaped meanwhile and a handled signal ends the wait at once.

#include "ddprun/agent/supervisor.hpp"
#include "ddprun/util/exit_status.hpp"

#include <spdlog/spdlog.h>

#include <csignal>

namespace ddprun::agent {

namespace {

/// How long an agent stopped by a signal tries to leave the rendezvous before it exits anyway.
constexpr std::chrono::milliseconds k_leave_bound{3000};

}  // namespace

asio::awaitable<void> Supervisor::stop_workers(int first_signal) {
  if (seams_.watchdog != nullptr) {
    seams_.watchdog->stop();  // removes the FIFO at every group stop, like torchrun
  }
  auto& launcher = seams_.launcher;
  for (const auto& step : process::make_stop_plan(first_signal, plan_.options.shutdown_timeout)) {
    if (workers_.all_stopped(launcher)) {
      break;
    }
    workers_.signal(launcher, step.signal, received_signal_ ? received_signal_ : SIGTERM);
    auto deadline = seams_.clock.now() + step.wait;
    while (!workers_.all_stopped(launcher)) {
      auto ev = co_await events_.pop_until(deadline);
      if (!ev) {
        break;
      }
      if (const auto* child = std::get_if<ChildExited>(&*ev)) {
        reap(*child);
      } else if (const auto* sig = std::get_if<AgentSignal>(&*ev); sig && step.signal != SIGCONT) {
        spdlog::warn("Received {} again while stopping: killing workers now",
                     process::signal_name(sig->signal));
        received_signal_ = received_signal_ ? received_signal_ : sig->signal;
        break;
      }
    }
  }
  stuck_ = workers_.after_stop(launcher);
  for (const auto& stuck : stuck_) {
    spdlog::error("[{}] {}", plan_.group.role, render_stuck(stuck, process::k_kill_wait));
  }
}

/// Runs the rendezvous step `op` beside the event loop and reaps exited children until it is
/// done: 0 then; the signal when a handled one comes first; -1 at `deadline`.
asio::awaitable<int> Supervisor::beside(asio::awaitable<void> op, util::SteadyTime deadline) {
  asio::co_spawn(ctx_, then_left(std::move(op)), asio::detached);
  while (auto ev = co_await events_.pop_until(deadline)) {
    if (std::holds_alternative<Left>(*ev)) {
      co_return 0;
    }
    if (const auto* child = std::get_if<ChildExited>(&*ev)) {
      reap(*child);
    } else if (const auto* sig = std::get_if<AgentSignal>(&*ev)) {
      co_return sig->signal;
    }
  }
  co_return -1;
}

asio::awaitable<void> Supervisor::then_left(asio::awaitable<void> op) {
  co_await std::move(op);
  events_.push(Left{});
}

/// This node was left out of the job: it lets go of the rendezvous (a store host serves the
/// others until the job ends) and exits; a handled signal ends the wait.
asio::awaitable<int> Supervisor::leave_job(const std::string& why) {
  spdlog::error("[{}] {}; this agent exits with status {}", plan_.group.role, why,
                util::k_exit_excluded);
  if (const int sig = co_await beside(seams_.rdzv.withdraw(), util::SteadyTime::max()); sig > 0) {
    spdlog::warn("Received {} while letting go of the rendezvous; exiting",
                 process::signal_name(sig));
  }
  co_return util::k_exit_excluded;
}

/// After a handled signal: leave the rendezvous so the other nodes re-form now rather than
/// after the keep-alive bound. Bounded: a store that does not answer, or a second signal,
/// must not hold up the exit.
asio::awaitable<void> Supervisor::leave_rendezvous() {
  const int sig =
      co_await beside(seams_.rdzv.leave(k_leave_bound), seams_.clock.now() + k_leave_bound);
  if (sig > 0) {
    spdlog::warn("Received {} again: exiting without leaving the rendezvous",
                 process::signal_name(sig));
  } else if (sig < 0) {
    spdlog::warn(
        "could not leave the rendezvous within {} ms; exiting anyway (the other nodes "
        "drop this one after the keep-alive bound)",
        k_leave_bound.count());
  }
}

/// Before a join: the node's health (node_health.hpp). An exit code when it must not join.
asio::awaitable<std::optional<int>> Supervisor::check_before_join() {
  const auto verdict = co_await health_.before_join(generation_ > 0);
  if (!verdict) {
    received_signal_ = health_.signal();
    co_await leave_rendezvous();
    co_return util::exit_for_signal(received_signal_);
  }
  if (verdict->healthy) {
    co_return std::nullopt;
  }
  co_return co_await leave_unhealthy(*verdict);
}

/// The check failed while workers ran: this node's failure of the group, the check's reason
/// its root cause; the node then withdraws.
asio::awaitable<int> Supervisor::fail_unhealthy_group() {
  phase_ = GroupPhase::stopping;
  const auto& verdict = health_.failure();
  spdlog::error("[{}] {}: stopping the worker group", plan_.group.role, verdict.reason);
  // A named note: g++ 12 destroys a braced temporary argument of a co_await'ed call twice.
  FailureNote note{health_.failed_at(), verdict.reason};
  co_await seams_.rdzv.report_failure(std::move(note));
  co_await stop_workers(SIGTERM);
  co_await seams_.io.drain(std::chrono::seconds(5));
  co_return co_await leave_unhealthy(verdict);
}

/// An unhealthy node does not join: it records why in the rendezvous (the others and `ddprun
/// status` see it), withdraws as a left-out node does and exits with k_exit_excluded.
asio::awaitable<int> Supervisor::leave_unhealthy(const HealthVerdict& verdict) {
  phase_ = GroupPhase::finished;
  for (const auto& line : verdict.lines) {
    spdlog::error("[{}] health check output: {}", plan_.group.role, line);
  }
  if (hooks_.unhealthy) {
    hooks_.unhealthy(verdict.reason, verdict.lines);
  }
  co_await seams_.rdzv.mark_unhealthy(verdict.reason);
  const std::string why = "this node is unhealthy: " + verdict.reason;
  co_return co_await leave_job(why);
}

/// No round formed: the rendezvous failed (exit 1), or the job stopped because restarting
/// would not help (a crash loop: the last attempt's failures are the job's, exit 3).
int Supervisor::end_without_round(const Error& error) {
  const auto& role = plan_.group.role;
  if (error.code == ErrorCode::not_needed) {
    spdlog::info("[{}] {}: the job did not need it", role, error.message);
    return util::k_exit_success;
  }
  if (error.code == ErrorCode::finished_without) {  // it came back after the end
    spdlog::warn("[{}] {}; this agent exits with status {}", role, error.message,
                 util::k_exit_success);
    return util::k_exit_success;
  }
  if (error.code != ErrorCode::given_up) {
    spdlog::error("rendezvous failed: {}", error.message);
    return util::k_exit_failure;
  }
  spdlog::error("[{}] {}; this agent exits with status {} (do not requeue)", role, error.message,
                util::k_exit_do_not_requeue);
  if (hooks_.gave_up) {
    hooks_.gave_up(error.message);
  }
  if (hooks_.failed && !workers_.empty()) {
    hooks_.failed(failures());
  }
  return util::k_exit_do_not_requeue;
}

asio::awaitable<int> Supervisor::finish(Step step) {
  if (step == Step::exit_signaled) {
    co_await stop_workers(received_signal_);
    co_await seams_.io.drain(std::chrono::seconds(2));
    co_await leave_rendezvous();
    co_return util::exit_for_signal(received_signal_);
  }
  if (step == Step::exit_store_lost) {
    spdlog::error("[{}] stopping the workers and exiting: lost the store of the {}",
                  plan_.group.role, seams_.rdzv.describe());
    co_await stop_workers(SIGTERM);
    co_await seams_.io.drain(std::chrono::seconds(5));
    co_return util::k_exit_failure;
  }
  co_await stop_workers(SIGTERM);
  co_await seams_.io.drain(std::chrono::seconds(5));
  if (step == Step::finish_success) {
    co_return co_await finish_success();
  }
  const auto hint = co_await report_group_failure();
  if (hooks_.failed) {
    hooks_.failed(failures());
  }
  if (hint) {
    spdlog::warn("[{}] {}", plan_.group.role, *hint);
  }
  co_await seams_.rdzv.exit_barrier(false);
  co_await seams_.rdzv.shutdown();
  co_return util::k_exit_failure;
}

/// This node's workers succeeded: the exit barrier waits for the other nodes (up to
/// --exit-barrier-timeout) and the run is closed. A handled signal ends that wait: the job has
/// not finished, so the agent exits as any agent stopped by a signal does, never with 0.
asio::awaitable<int> Supervisor::finish_success() {
  auto close = [](Rendezvous& rdzv) -> asio::awaitable<void> {
    co_await rdzv.exit_barrier(true);
    co_await rdzv.shutdown();
  };
  if (const int sig = co_await beside(close(seams_.rdzv), util::SteadyTime::max()); sig > 0) {
    received_signal_ = sig;
    spdlog::warn("Received {} death signal while waiting for the other nodes to finish; exiting",
                 process::signal_name(sig));
    co_return util::exit_for_signal(sig);
  }
  co_return util::k_exit_success;
}

}  // namespace ddprun::agent
