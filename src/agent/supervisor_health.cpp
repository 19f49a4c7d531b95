// The supervisor's node health checks (docs/reliability.md, "Node health checks").
//
// Before each join (check_before_join): after a group ran, the wait for its GPUs' memory to
// fall under --gpu-memory-tolerance (host::GpuMemorySource, at most --gpu-memory-wait), then
// --health-check (HealthCommand, at most --health-check-timeout). Both wait on the
// supervisor's event queue, so the check's exit is reaped like any child's and a handled
// signal still ends the agent at once. An unhealthy node does not join: it records why in the
// rendezvous (Rendezvous::mark_unhealthy: the others and `ddprun status` see it), withdraws as
// a left-out node does and exits with k_exit_excluded.
//
// With --health-check-interval, monitor() also runs the check while workers run
// (on_health_event): it starts at the deadline health_due() gives, and its exit (or timeout)
// arrives among the round's events. A failing check is this node's failure of the group, the
// check's reason its root cause (fail_unhealthy_group); the node then withdraws the same way.

#include "ddprun/agent/supervisor.hpp"
#include "ddprun/util/exit_status.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <utility>

namespace ddprun::agent {

namespace {

std::string seconds_text(std::chrono::nanoseconds d) {
  return fmt::format("{:.1f}", std::chrono::duration<double>(d).count());
}

}  // namespace

HealthCommand& Supervisor::health_command() {
  if (!health_check_) {
    health_check_ = std::make_unique<HealthCommand>(ctx_, launcher_, clock_, cfg_.health.command,
                                                    cfg_.health.timeout, agent_env_.to_strings());
  }
  return *health_check_;
}

asio::awaitable<std::optional<int>> Supervisor::check_before_join() {
  std::optional<HealthVerdict> verdict = HealthVerdict{};
  if (generation_ > 0) {  // a group ran and stopped
    verdict = co_await wait_for_gpu_memory();
  }
  if (verdict && verdict->healthy && !cfg_.health.command.empty()) {
    verdict = co_await run_health_check();
  }
  if (!verdict) {
    co_await leave_rendezvous();
    co_return util::exit_for_signal(received_signal_);
  }
  if (verdict->healthy) {
    co_return std::nullopt;
  }
  co_return co_await leave_unhealthy(*verdict);
}

/// Waits until `until`, reaping children meanwhile; false when a handled signal came first.
asio::awaitable<bool> Supervisor::pause_until(util::SteadyTime until) {
  while (auto ev = co_await events_.pop_until(until)) {
    if (ev->kind == Event::Kind::child_exited) {
      handle_child(ev->pid, ev->status);
    } else if (ev->kind == Event::Kind::agent_signal) {
      received_signal_ = ev->signal;
      spdlog::warn("Received {} death signal while checking this node's health; exiting",
                   process::signal_name(ev->signal));
      co_return false;
    }
  }
  co_return true;
}

asio::awaitable<std::optional<HealthVerdict>> Supervisor::wait_for_gpu_memory() {
  const auto bound = cfg_.health.gpu_memory_wait;
  const auto tolerance = cfg_.health.gpu_memory_tolerance_mib;
  if (gpu_memory_ == nullptr || bound.count() <= 0) {
    co_return HealthVerdict{};
  }
  const auto started = clock_.now();
  std::vector<host::GpuMemory> first_busy;
  while (true) {
    auto used = gpu_memory_->read();
    if (!used) {
      spdlog::debug("no GPU-memory wait: {}", used.error().message);
      co_return HealthVerdict{};
    }
    const auto step = decide_gpu_wait(*used, tolerance, started, clock_.now(), bound);
    if (step.kind == GpuWaitStep::Kind::unhealthy) {
      co_return HealthVerdict{false, render_gpu_unhealthy(step.busy, bound, tolerance), {}};
    }
    if (step.kind == GpuWaitStep::Kind::done) {
      if (!first_busy.empty()) {
        const auto waited =
            std::chrono::duration_cast<std::chrono::milliseconds>(clock_.now() - started);
        spdlog::info("[{}] {}", group_.role, render_gpu_wait_done(first_busy, waited, tolerance));
      }
      co_return HealthVerdict{};
    }
    if (first_busy.empty()) {
      first_busy = step.busy;
      spdlog::info("[{}] waiting up to {:g} s for the stopped workers' GPU memory to be freed",
                   group_.role, std::chrono::duration<double>(bound).count());
    }
    if (!co_await pause_until(step.next)) {
      co_return std::nullopt;
    }
  }
}

asio::awaitable<std::optional<HealthVerdict>> Supervisor::run_health_check() {
  auto& check = health_command();
  co_await settle_health_group();  // a check still running from the last round goes
  const auto started = clock_.now();
  if (auto ok = check.start(); !ok) {
    co_return judge_health_check(CheckEnd::not_started_because(ok.error().message), {});
  }
  std::optional<HealthVerdict> verdict;
  while (!verdict) {
    auto ev = co_await events_.pop_until(check.deadline());
    if (!ev) {
      verdict = co_await check.time_out();
    } else if (ev->kind == Event::Kind::child_exited && ev->pid == check.pid()) {
      verdict = co_await check.exited(ev->status);
    } else if (ev->kind == Event::Kind::child_exited) {
      handle_child(ev->pid, ev->status);
    } else if (ev->kind == Event::Kind::agent_signal) {
      received_signal_ = ev->signal;
      spdlog::warn("Received {} death signal during the health check; exiting",
                   process::signal_name(ev->signal));
      co_await settle_health_group();
      co_return std::nullopt;
    }
  }
  co_await settle_health_group();
  last_health_check_ = clock_.now();
  if (verdict->healthy) {
    spdlog::info("[{}] health check passed ({} s)", group_.role,
                 seconds_text(last_health_check_ - started));
  }
  co_return verdict;
}

/// Kills what is left of the last check's group and waits (bounded) until it is reaped, so the
/// launcher can forget it. Every other event meanwhile is queued again, in order, for the
/// caller's loop.
asio::awaitable<void> Supervisor::settle_health_group() {
  if (!health_check_) {
    co_return;
  }
  auto& check = *health_check_;
  const pid_t group = check.group();
  check.kill();
  std::vector<Event> others;
  const auto deadline = clock_.now() + process::k_kill_wait;
  while (check.group_alive()) {
    auto ev = co_await events_.pop_until(deadline);
    if (!ev) {
      break;
    }
    if (ev->kind != Event::Kind::child_exited || ev->pid != group) {
      others.push_back(std::move(*ev));  // the check's grandchildren are orphans, reaped later
    }
  }
  if (check.group_alive()) {
    spdlog::error("the health check's process group {} did not end after SIGKILL; abandoning it",
                  group);
  } else {
    check.forget();
  }
  for (auto& ev : others) {
    events_.push(std::move(ev));
  }
}

util::SteadyTime Supervisor::health_due() const {
  if (cfg_.health.interval.count() <= 0 || !health_check_) {
    return util::SteadyTime::max();
  }
  if (health_check_->pid() != 0) {
    return health_check_->deadline();
  }
  return std::max(round_started_, last_health_check_) + cfg_.health.interval;
}

asio::awaitable<Supervisor::HealthTick> Supervisor::on_health_event(
    const std::optional<Event>& next) {
  if (cfg_.health.interval.count() <= 0 || !health_check_) {
    co_return HealthTick::none;
  }
  auto& check = *health_check_;
  const bool running = check.pid() != 0;
  std::optional<HealthVerdict> verdict;
  if (next) {
    if (!running || next->kind != Event::Kind::child_exited || next->pid != check.pid()) {
      co_return HealthTick::none;
    }
    verdict = co_await check.exited(next->status);
  } else if (running && clock_.now() >= check.deadline()) {
    verdict = co_await check.time_out();
  } else if (!running && clock_.now() >= health_due()) {
    auto ok = check.start();
    if (ok) {
      co_return HealthTick::handled;
    }
    verdict = judge_health_check(CheckEnd::not_started_because(ok.error().message), {});
  } else {
    co_return HealthTick::none;
  }
  co_await settle_health_group();
  last_health_check_ = clock_.now();
  if (verdict->healthy) {
    co_return HealthTick::handled;
  }
  unhealthy_ = std::move(*verdict);
  unhealthy_at_ = clock_.wall_now();
  co_return HealthTick::unhealthy;
}

asio::awaitable<int> Supervisor::fail_unhealthy_group() {
  phase_ = "stopping";
  spdlog::error("[{}] {}: stopping the worker group", group_.role, unhealthy_.reason);
  // A named note: g++ 12 destroys a braced temporary argument of a co_await'ed call twice.
  FailureNote note{unhealthy_at_, unhealthy_.reason};
  co_await rdzv_.report_failure(std::move(note));
  co_await stop_workers(SIGTERM);
  co_await io_.drain(std::chrono::seconds(5));
  co_return co_await leave_unhealthy(unhealthy_);
}

asio::awaitable<int> Supervisor::leave_unhealthy(const HealthVerdict& verdict) {
  phase_ = "finished";
  for (const auto& line : verdict.lines) {
    spdlog::error("[{}] health check output: {}", group_.role, line);
  }
  if (hooks_.unhealthy) {
    hooks_.unhealthy(verdict.reason, verdict.lines);
  }
  co_await rdzv_.mark_unhealthy(verdict.reason);
  const std::string why = "this node is unhealthy: " + verdict.reason;
  co_return co_await leave_job(why);
}

}  // namespace ddprun::agent
