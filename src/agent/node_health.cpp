// NodeHealth (node_health.hpp): the GPU-memory wait and the health check, on the supervisor's
// event queue.

#include "ddprun/agent/node_health.hpp"

#include "ddprun/process/exit_info.hpp"
#include "ddprun/process/launcher.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

namespace ddprun::agent {

namespace {

std::string seconds_text(std::chrono::nanoseconds d) {
  return fmt::format("{:.1f}", std::chrono::duration<double>(d).count());
}

}  // namespace

NodeHealth::NodeHealth(asio::io_context& ctx, const config::HealthChecks& cfg, std::string role,
                       process::Launcher& launcher, const util::Clock& clock, const util::Env& env,
                       host::GpuMemorySource* gpu_memory, Events& events,
                       std::function<void(const ChildExited&)> reap)
    : ctx_(ctx),
      cfg_(cfg),
      role_(std::move(role)),
      launcher_(launcher),
      clock_(clock),
      env_(env),
      gpu_memory_(gpu_memory),
      events_(events),
      reap_(std::move(reap)) {}

HealthCommand& NodeHealth::command() {
  if (!check_) {
    check_ = std::make_unique<HealthCommand>(ctx_, launcher_, clock_, cfg_.command, cfg_.timeout,
                                             env_.to_strings());
  }
  return *check_;
}

asio::awaitable<std::optional<HealthVerdict>> NodeHealth::before_join(bool after_group) {
  std::optional<HealthVerdict> verdict = HealthVerdict{};
  if (after_group) {
    verdict = co_await wait_for_gpu_memory();
  }
  if (verdict && verdict->healthy && !cfg_.command.empty()) {
    verdict = co_await run_check();
  }
  co_return verdict;
}

/// Waits until `until`, reaping children meanwhile; false when a handled signal came first.
asio::awaitable<bool> NodeHealth::pause_until(util::SteadyTime until) {
  while (auto ev = co_await events_.pop_until(until)) {
    if (const auto* child = std::get_if<ChildExited>(&*ev)) {
      reap_(*child);
    } else if (const auto* sig = std::get_if<AgentSignal>(&*ev)) {
      signal_ = sig->signal;
      spdlog::warn("Received {} death signal while checking this node's health; exiting",
                   process::signal_name(signal_));
      co_return false;
    }
  }
  co_return true;
}

asio::awaitable<std::optional<HealthVerdict>> NodeHealth::wait_for_gpu_memory() {
  const auto bound = cfg_.gpu_memory_wait;
  const auto tolerance = cfg_.gpu_memory_tolerance_mib;
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
        spdlog::info("[{}] {}", role_, render_gpu_wait_done(first_busy, waited, tolerance));
      }
      co_return HealthVerdict{};
    }
    if (first_busy.empty()) {
      first_busy = step.busy;
      spdlog::info("[{}] waiting up to {:g} s for the stopped workers' GPU memory to be freed",
                   role_, std::chrono::duration<double>(bound).count());
    }
    if (!co_await pause_until(step.next)) {
      co_return std::nullopt;
    }
  }
}

asio::awaitable<std::optional<HealthVerdict>> NodeHealth::run_check() {
  auto& check = command();
  co_await settle();  // a check still running from the last round goes
  const auto started = clock_.now();
  if (auto ok = check.start(); !ok) {
    co_return judge_health_check(CheckEnd::not_started_because(ok.error().message), {});
  }
  std::optional<HealthVerdict> verdict;
  while (!verdict) {
    auto ev = co_await events_.pop_until(check.deadline());
    const auto* child = ev ? std::get_if<ChildExited>(&*ev) : nullptr;
    const auto* sig = ev ? std::get_if<AgentSignal>(&*ev) : nullptr;
    if (!ev) {
      verdict = co_await check.time_out();
    } else if (child != nullptr && child->pid == check.pid()) {
      verdict = co_await check.exited(child->status);
    } else if (child != nullptr) {
      reap_(*child);
    } else if (sig != nullptr) {
      signal_ = sig->signal;
      spdlog::warn("Received {} death signal during the health check; exiting",
                   process::signal_name(signal_));
      co_await settle();
      co_return std::nullopt;
    }
  }
  co_await settle();
  last_check_ = clock_.now();
  if (verdict->healthy) {
    spdlog::info("[{}] health check passed ({} s)", role_, seconds_text(last_check_ - started));
  }
  co_return verdict;
}

/// Kills what is left of the last check's group and waits (bounded) until it is reaped, so the
/// launcher can forget it. Every other event meanwhile is queued again, in order, for the
/// caller's loop.
asio::awaitable<void> NodeHealth::settle() {
  if (!check_) {
    co_return;
  }
  auto& check = *check_;
  const pid_t group = check.group();
  check.kill();
  std::vector<Event> others;
  const auto deadline = clock_.now() + process::k_kill_wait;
  while (check.group_alive()) {
    auto ev = co_await events_.pop_until(deadline);
    if (!ev) {
      break;
    }
    const auto* child = std::get_if<ChildExited>(&*ev);
    if (child == nullptr || child->pid != group) {
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

util::SteadyTime NodeHealth::due(util::SteadyTime round_started) const {
  if (cfg_.interval.count() <= 0 || !check_) {
    return util::SteadyTime::max();
  }
  if (check_->pid() != 0) {
    return check_->deadline();
  }
  return std::max(round_started, last_check_) + cfg_.interval;
}

asio::awaitable<NodeHealth::Tick> NodeHealth::on_event(const std::optional<Event>& next,
                                                       util::SteadyTime round_started) {
  if (cfg_.interval.count() <= 0 || !check_) {
    co_return Tick::none;
  }
  auto& check = *check_;
  const bool running = check.pid() != 0;
  if (next) {
    const auto* child = std::get_if<ChildExited>(&*next);
    if (!running || child == nullptr || child->pid != check.pid()) {
      co_return Tick::none;
    }
    auto verdict = co_await check.exited(child->status);
    co_return co_await ended(std::move(verdict));
  }
  if (running && clock_.now() >= check.deadline()) {
    auto verdict = co_await check.time_out();
    co_return co_await ended(std::move(verdict));
  }
  if (running || clock_.now() < due(round_started)) {
    co_return Tick::none;
  }
  auto ok = check.start();
  if (ok) {
    co_return Tick::handled;
  }
  // Named: g++ 12 destroys a temporary argument of a co_await'ed call twice.
  auto verdict = judge_health_check(CheckEnd::not_started_because(ok.error().message), {});
  co_return co_await ended(std::move(verdict));
}

/// A check run while workers ran (or this node waited) ended with `verdict`.
asio::awaitable<NodeHealth::Tick> NodeHealth::ended(HealthVerdict verdict) {
  co_await settle();
  last_check_ = clock_.now();
  if (verdict.healthy) {
    co_return Tick::handled;
  }
  failure_ = std::move(verdict);
  failed_at_ = clock_.wall_now();
  co_return Tick::unhealthy;
}

}  // namespace ddprun::agent
