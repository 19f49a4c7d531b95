#pragma once
// NodeHealth: whether this node may run (another) worker group (docs/reliability.md, "Node
// health checks"), for the supervisor.
//
// Before each join (before_join): after a group ran, the wait for its GPUs' memory to fall
// under --gpu-memory-tolerance (host::GpuMemorySource, at most --gpu-memory-wait), then
// --health-check (HealthCommand, at most --health-check-timeout). Both wait on the
// supervisor's event queue, so the check's exit is reaped like any child's, other children are
// handed back to the supervisor (`reap`), and a handled signal ends the wait at once.
//
// With --health-check-interval the check also runs while the supervisor waits for a round or
// runs one: it waits at most until due(), and passes every event (or timeout) through
// on_event(), which starts the check, takes its exit or times it out. A failing check is kept
// (failure()) for the supervisor to stop the group and withdraw.

#include "ddprun/agent/health_check.hpp"
#include "ddprun/agent/health_command.hpp"
#include "ddprun/agent/supervisor_events.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/host/gpus.hpp"
#include "ddprun/util/env.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ddprun::agent {

class NodeHealth {
 public:
  /// What on_event() made of an event: not the check's, the check's (nothing more to do),
  /// or the check failed (failure()).
  enum class Tick { none, handled, unhealthy };

  /// `env` is the check's whole environment (read when the first check starts); `gpu_memory`
  /// may be null (no wait). Everything referenced must outlive this object.
  NodeHealth(asio::io_context& ctx, const config::HealthChecks& cfg, std::string role,
             process::Launcher& launcher, const util::Clock& clock, const util::Env& env,
             host::GpuMemorySource* gpu_memory, Events& events,
             std::function<void(const ChildExited&)> reap);

  /// Before a join (`after_group`: a group ran and stopped): the verdict, or nullopt when a
  /// handled signal came first (signal() names it).
  asio::awaitable<std::optional<HealthVerdict>> before_join(bool after_group);
  /// With --health-check-interval: when the next check starts or the running one times out
  /// (SteadyTime::max() otherwise); the interval counts from `round_started` or the last check.
  util::SteadyTime due(util::SteadyTime round_started) const;
  /// Passes an event popped with due() as deadline (nullopt: the deadline passed).
  asio::awaitable<Tick> on_event(const std::optional<Event>& next, util::SteadyTime round_started);
  /// The check that failed while a group ran or waited (healthy until one does), and when.
  const HealthVerdict& failure() const { return failure_; }
  std::chrono::system_clock::time_point failed_at() const { return failed_at_; }
  /// The handled signal that ended a wait (0: none).
  int signal() const { return signal_; }

 private:
  HealthCommand& command();
  asio::awaitable<bool> pause_until(util::SteadyTime until);
  asio::awaitable<std::optional<HealthVerdict>> wait_for_gpu_memory();
  asio::awaitable<std::optional<HealthVerdict>> run_check();
  asio::awaitable<void> settle();
  asio::awaitable<Tick> ended(HealthVerdict verdict);

  asio::io_context& ctx_;
  const config::HealthChecks& cfg_;
  std::string role_;
  process::Launcher& launcher_;
  const util::Clock& clock_;
  const util::Env& env_;
  host::GpuMemorySource* gpu_memory_;
  Events& events_;
  std::function<void(const ChildExited&)> reap_;
  std::unique_ptr<HealthCommand> check_;  ///< made at the first check
  util::SteadyTime last_check_{};         ///< when the last check ended
  HealthVerdict failure_;
  std::chrono::system_clock::time_point failed_at_{};
  int signal_ = 0;
};

}  // namespace ddprun::agent
