#pragma once
// Supervisor: the agent's event loop body. It owns the workers of the current round and
// turns OS events (SIGCHLD, signals to the agent) and rendezvous events into steps.

#include "ddprun/agent/event_queue.hpp"
#include "ddprun/agent/health.hpp"
#include "ddprun/agent/health_check.hpp"
#include "ddprun/agent/health_command.hpp"
#include "ddprun/agent/job_stacks.hpp"
#include "ddprun/agent/policy.hpp"
#include "ddprun/agent/seams.hpp"
#include "ddprun/agent/stack_exchange.hpp"
#include "ddprun/agent/stall_estimator.hpp"
#include "ddprun/agent/unkillable.hpp"
#include "ddprun/agent/worker_env.hpp"
#include "ddprun/agent/worker_state.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/host/gpus.hpp"
#include "ddprun/process/exit_info.hpp"
#include "ddprun/process/launcher.hpp"
#include "ddprun/util/clock.hpp"

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ddprun::agent {

/// A worker that ended badly, as the failure report needs it.
struct WorkerFailure {
  WorkerRanks ranks;
  pid_t pid = 0;
  process::ExitInfo exit;
  std::chrono::system_clock::time_point when;
  std::string error_file;
  std::vector<std::string> stderr_tail;
  std::string reason;  ///< what ddprun knows beyond the exit ("watchdog timer "x" expired")
};

/// Lifecycle notifications (the events file, tests). All optional.
struct SupervisorHooks {
  std::function<void(const Round&, const std::vector<pid_t>&)> workers_started;
  std::function<void(const WorkerRanks&, pid_t, const process::ExitInfo&)> worker_exited;
  std::function<void(Outcome, Step, int restarts_left)> round_ended;
  std::function<void(const std::vector<WorkerFailure>&)> failed;  ///< final failure report
  /// The job stopped because restarting would not help (a crash loop): why, before `failed`.
  std::function<void(const std::string& reason)> gave_up;
  /// Workers failed and the group restarts (a restart is left): what failed, for the log.
  std::function<void(const std::vector<WorkerFailure>&)> attempt_failed;
  /// A worker's file timer ran out; its signal is being sent.
  std::function<void(const WorkerRanks&, const TimerExpiry&)> watchdog_expired;
  /// Stacks were taken (a stall, an expired timer, a failure with --stacks-on-failure, or a
  /// peer's request): this node's, or the whole job's when this node asked.
  std::function<void(const StackReport&)> stacks_taken;
  /// With --stall-timeout auto: the timeout changed notably (stall_estimator.hpp); `why` says
  /// how it came about ("--stall-timeout auto: 5 × 58 s; longest gap in ...").
  std::function<void(std::chrono::milliseconds timeout, const std::string& why)>
      stall_timeout_changed;
  /// This node failed its health checks (health_check.hpp) and withdraws: the one-line reason
  /// and the check's last output lines.
  std::function<void(const std::string&, const std::vector<std::string>&)> unhealthy;
};

/// Drives the OS only through its seams: `launcher` (spawn, signal, reap, group liveness),
/// `clock` (deadlines and failure times), `rdzv` and `io`; tests give it fakes of each
/// (tests/support/fake_launcher.hpp). SIGCHLD and the handled signals arrive on its
/// signal_set: a wake-up to call launcher.reap_exited(), whatever the launcher is.
class Supervisor {
 public:
  /// Reads these parts of the launch plan, which must outlive it: the group, how to watch it,
  /// how its workers start and where they run; `rdzv_settings`' crash-loop bounds tell the
  /// rendezvous which failures came quickly and when a repeated one is worth a hint.
  Supervisor(asio::io_context& ctx, const config::WorkerGroup& group,
             const config::SupervisorOptions& cfg, const config::WorkerCommand& command,
             const config::HostPlan& host, const rdzv::RdzvSettings& rdzv_settings,
             util::Env agent_env, process::Launcher& launcher, const util::Clock& clock,
             Rendezvous& rdzv, WorkerIo& io, SupervisorHooks hooks);

  /// Where stacks of still-running workers are taken before a group is stopped for a stall,
  /// an expired file timer, or (with --stacks-on-failure) a failure. Without one, nothing is
  /// captured.
  void set_stack_capture(StackCapture& capture) { job_stacks_.set_capture(capture); }
  /// The other nodes, for a job-wide stack report (default: none, a node alone). It must
  /// outlive run().
  void set_stack_exchange(StackExchange& peers) { job_stacks_.set_peers(peers); }

  /// Runs rounds until success, final failure or a handled signal; returns the exit code.
  asio::awaitable<int> run();

  /// Arms `watchdog` for each worker group (nullptr: none). It must outlive run().
  void set_watchdog(Watchdog* watchdog) { watchdog_ = watchdog; }
  /// What every worker's environment gets beyond `agent_env` and its round's variables
  /// (worker_env.hpp; default: the NCCL names, nothing else).
  void set_worker_env_plan(WorkerEnvPlan plan) { env_plan_ = std::move(plan); }
  /// Where the used memory of the workers' GPUs is read after a group stops
  /// (--gpu-memory-wait); nullptr: no wait. It must outlive run().
  void set_gpu_memory(host::GpuMemorySource* source) { gpu_memory_ = source; }

  /// When a worker last showed progress: the last output the agent read or file-timer request
  /// it got (the epoch: none yet). The stall watchdog and `ddprun status` read it.
  util::SteadyTime last_progress() const;

  /// The stall timeout that applies now (0: off); with `auto`, the learned one.
  std::chrono::milliseconds stall_timeout() const;
  /// With --stall-timeout auto, what this node learned (merged with the job's), for the
  /// rendezvous to combine; nullopt otherwise.
  std::optional<rdzv::StallFigures> stall_figures() const;
  /// The job's figures, the maximum over the round's members (ignored without auto).
  void adopt_stall_figures(const rdzv::StallFigures& job);

  /// What the health-check endpoint reports now (health.hpp): the phase, the group's restart
  /// count, the running workers and, while they run, the seconds since their last progress.
  HealthSnapshot health() const;

 private:
  /// One event for monitor(); the fields after `kind` that it does not name stay empty.
  struct Event {
    enum class Kind { child_exited, agent_signal, rdzv, round_ready, left, timer_expired } kind;
    pid_t pid = 0;                       ///< child_exited, timer_expired
    int status = 0;                      ///< child_exited: the wait status
    int signal = 0;                      ///< agent_signal; timer_expired: the timer's signal
    RdzvSignal rdzv = RdzvSignal::none;  ///< rdzv
    std::shared_ptr<Result<Round>> round = nullptr;  ///< round_ready
    std::string scope{};                             ///< timer_expired: the timer's scope_id
  };

  asio::awaitable<void> signal_loop();
  asio::awaitable<void> rdzv_watch_loop(int generation);
  asio::awaitable<void> join_round(int restart_count);
  asio::awaitable<std::optional<Result<Round>>> next_round(int restart_count);
  Result<void> start_workers(const Round& round);
  asio::awaitable<Outcome> monitor();
  void handle_child(pid_t pid, int status);
  Result<std::string> start_watchdog();
  asio::awaitable<void> handle_timer_expired(Event ev);
  bool all_succeeded() const;
  asio::awaitable<void> stop_workers(int first_signal);
  // Hangs (supervisor_hang.cpp).
  util::SteadyTime stall_deadline() const;
  util::SteadyTime watch_deadline() const;
  bool found_stall();
  void stall_round_started();
  void note_stall_timeout();
  std::string stall_reason() const;
  std::vector<StackTarget> stack_targets(pid_t keep_running = 0);
  asio::awaitable<void> take_stacks(std::string reason, bool stall, pid_t keep_running = 0);
  asio::awaitable<void> answer_stacks_request();
  // The group's failure for the rendezvous (supervisor_failure.cpp).
  // Node health checks (supervisor_health.cpp).
  enum class HealthTick { none, handled, unhealthy };
  HealthCommand& health_command();
  asio::awaitable<std::optional<int>> check_before_join();
  asio::awaitable<bool> pause_until(util::SteadyTime until);
  asio::awaitable<std::optional<HealthVerdict>> wait_for_gpu_memory();
  asio::awaitable<std::optional<HealthVerdict>> run_health_check();
  asio::awaitable<void> settle_health_group();
  util::SteadyTime health_due() const;
  asio::awaitable<HealthTick> on_health_event(const std::optional<Event>& next);
  asio::awaitable<int> fail_unhealthy_group();
  asio::awaitable<int> leave_unhealthy(const HealthVerdict& verdict);
  std::string failure_reason() const;
  FailureNote failure_note() const;
  asio::awaitable<std::optional<std::string>> report_group_failure();
  std::string failure_signature(const WorkerRecord& w) const;
  std::string last_error_line(int local_rank) const;
  bool all_stopped() const;
  void signal_all(int sig);
  WorkerFailure failure_of(const WorkerRecord& w, std::string reason) const;
  std::vector<WorkerFailure> collect_failures() const;
  int end_without_round(const Error& error);
  asio::awaitable<int> finish(Step step);
  asio::awaitable<int> finish_success();
  asio::awaitable<void> close_after_success();
  asio::awaitable<int> leave_job(const std::string& why);
  asio::awaitable<void> withdraw();
  asio::awaitable<int> until_left(util::SteadyTime deadline);
  asio::awaitable<void> leave_round();
  asio::awaitable<void> leave_rendezvous();

  asio::io_context& ctx_;
  const config::WorkerGroup& group_;
  const config::SupervisorOptions& cfg_;
  const config::WorkerCommand& command_;
  const config::HostPlan& host_;
  const rdzv::RdzvSettings& rdzv_settings_;
  util::Env agent_env_;
  WorkerEnvPlan env_plan_;
  process::Launcher& launcher_;
  const util::Clock& clock_;
  Rendezvous& rdzv_;
  WorkerIo& io_;
  SupervisorHooks hooks_;
  asio::signal_set signals_;
  EventQueue<Event> events_;
  NoPeers no_peers_;
  JobStacks job_stacks_;
  std::vector<WorkerRecord> workers_;
  std::vector<std::size_t> failure_order_;  // indices of failed workers, in observed order
  int received_signal_ = 0;
  int generation_ = 0;
  Watchdog* watchdog_ = nullptr;
  util::SteadyTime round_started_{};
  std::string phase_ = "rendezvous";  ///< HealthSnapshot::state
  int restart_count_ = 0;             ///< of the group being joined or run
  std::string stall_;                 ///< why the current round stalled ("" if it did not)
  std::chrono::system_clock::time_point stalled_at_{};
  std::optional<StallEstimator> stall_est_ = make_stall_estimator(cfg_.stall_auto);
  std::optional<StallTimeout> stall_logged_;  ///< the value last logged (auto)
  util::SteadyTime next_stall_sample_{};
  std::unique_ptr<HealthCommand> health_check_;  ///< --health-check, made at the first check
  host::GpuMemorySource* gpu_memory_ = nullptr;
  util::SteadyTime last_health_check_{};  ///< when the last check ended
  HealthVerdict unhealthy_;               ///< a failed check while workers ran
  std::vector<StuckWorker> stuck_;        ///< workers the last stop could not end
  std::chrono::system_clock::time_point unhealthy_at_{};
};

}  // namespace ddprun::agent
