#pragma once
// Supervisor: the agent's event loop body. It owns the workers of the current round and
// turns OS events (SIGCHLD, signals to the agent) and rendezvous events into steps; the units
// it coordinates keep their own state: GroupWorkers (the round's workers and failures),
// NodeHealth (checks before and during rounds), StallWatch, JobStacks.

#include "ddprun/agent/group_workers.hpp"
#include "ddprun/agent/health.hpp"
#include "ddprun/agent/job_stacks.hpp"
#include "ddprun/agent/node_health.hpp"
#include "ddprun/agent/policy.hpp"
#include "ddprun/agent/seams.hpp"
#include "ddprun/agent/stack_exchange.hpp"
#include "ddprun/agent/stall_watch.hpp"
#include "ddprun/agent/supervisor_events.hpp"
#include "ddprun/agent/supervisor_hooks.hpp"
#include "ddprun/agent/unkillable.hpp"
#include "ddprun/agent/worker_env.hpp"
#include "ddprun/agent/worker_state.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/host/gpus.hpp"
#include "ddprun/process/launcher.hpp"
#include "ddprun/util/clock.hpp"

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace ddprun::agent {

/// The parts of the launch plan the supervisor reads (they must outlive it): the group, how to
/// watch it, how its workers start and where they run; `rdzv`'s crash-loop bounds tell the
/// rendezvous which failures came quickly and when a repeated one is worth a hint.
struct SupervisorPlan {
  const config::WorkerGroup& group;
  const config::SupervisorOptions& options;
  const config::WorkerCommand& command;
  const config::HostPlan& host;
  const rdzv::RdzvSettings& rdzv;
  util::Env agent_env;       ///< the base of every worker's environment
  WorkerEnvPlan env_plan{};  ///< what every worker gets beyond it and its round's variables
};

/// What the supervisor drives the OS and the job through; tests give fakes of each
/// (tests/support/fake_launcher.hpp). All must outlive it. The optional ones may stay null:
/// no file timers, no stacks taken, a node alone, no GPU-memory wait.
struct SupervisorSeams {
  process::Launcher& launcher;  ///< spawn, signal, reap, group liveness
  const util::Clock& clock;     ///< deadlines and failure times
  Rendezvous& rdzv;
  WorkerIo& io;
  Watchdog* watchdog = nullptr;
  StackCapture* stacks = nullptr;
  StackExchange* peers = nullptr;
  host::GpuMemorySource* gpu_memory = nullptr;
};

/// Runs the agent's rounds. SIGCHLD and the handled signals arrive on its signal_set: a
/// wake-up to call launcher.reap_exited(), whatever the launcher is.
class Supervisor {
 public:
  Supervisor(asio::io_context& ctx, SupervisorPlan plan, SupervisorSeams seams,
             SupervisorHooks hooks);

  /// Runs rounds until success, final failure or a handled signal; returns the exit code.
  asio::awaitable<int> run();

  /// When a worker last showed progress: the last output the agent read or file-timer request
  /// it got (the epoch: none yet). The stall watchdog and `ddprun status` read it.
  util::SteadyTime last_progress() const;
  /// The stall watchdog (stall_watch.hpp): the timeout in force, with --stall-timeout auto
  /// what this node learned (for the rendezvous to combine) and the job's figures it adopts.
  StallWatch& stall_watch() { return stall_; }
  const StallWatch& stall_watch() const { return stall_; }
  /// What the health-check endpoint reports now (health.hpp): the phase, the group's restart
  /// count, the running workers and, while they run, the seconds since their last progress.
  HealthSnapshot health() const;

 private:
  // The event loop (supervisor.cpp).
  asio::awaitable<void> signal_loop();
  asio::awaitable<void> rdzv_watch_loop(int generation);
  asio::awaitable<void> join_round(int restart_count);
  asio::awaitable<std::optional<Result<Round>>> next_round(int restart_count);
  Result<void> start_workers(const Round& round);
  asio::awaitable<Outcome> monitor();
  asio::awaitable<std::optional<Outcome>> during_round(Event& ev);
  void reap(const ChildExited& child);
  asio::awaitable<std::optional<int>> after_round(Outcome outcome, int& restarts);
  // Stopping and leaving (supervisor_stop.cpp).
  asio::awaitable<void> stop_workers(int first_signal);
  asio::awaitable<int> beside(asio::awaitable<void> op, util::SteadyTime deadline);
  asio::awaitable<void> then_left(asio::awaitable<void> op);
  asio::awaitable<int> leave_job(const std::string& why);
  asio::awaitable<void> leave_rendezvous();
  asio::awaitable<std::optional<int>> check_before_join();
  asio::awaitable<int> fail_unhealthy_group();
  asio::awaitable<int> leave_unhealthy(const HealthVerdict& verdict);
  int end_without_round(const Error& error);
  asio::awaitable<int> finish(Step step);
  asio::awaitable<int> finish_success();
  // Hangs and failures (supervisor_hang.cpp).
  GroupProgress progress() const;
  asio::awaitable<void> take_stacks(std::string reason, bool stall, pid_t keep_running = 0);
  asio::awaitable<void> on_timer_expired(const TimerExpired& ev);
  FailureNote failure_note() const;
  asio::awaitable<std::optional<std::string>> report_group_failure();
  std::vector<WorkerFailure> failures() const;

  asio::io_context& ctx_;
  SupervisorPlan plan_;
  SupervisorSeams seams_;
  SupervisorHooks hooks_;
  asio::signal_set signals_;
  Events events_;
  NoPeers no_peers_;
  JobStacks job_stacks_;
  GroupWorkers workers_;
  NodeHealth health_;
  StallWatch stall_;
  int received_signal_ = 0;
  int generation_ = 0;
  util::SteadyTime round_started_{};
  GroupPhase phase_ = GroupPhase::rendezvous;
  int restart_count_ = 0;           ///< of the group being joined or run
  std::vector<StuckWorker> stuck_;  ///< workers the last stop could not end
};

}  // namespace ddprun::agent
