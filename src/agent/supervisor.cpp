// The supervisor runs one agent's rounds on a single-threaded io_context.
//
// A round: join the rendezvous, start every local worker (each in its own process group),
// then wait for events. Events come from five producers that never block:
//   - signal_loop(): Asio's signal_set delivers SIGCHLD and the handled signals. On SIGCHLD it
//     asks the launcher to reap every exited child (PosixLauncher: waitpid(-1, WNOHANG); the
//     agent is a child subreaper and owns all of its children, including grandchildren
//     orphaned by a dead worker) and queues one event per child. Signals coalesce, so one
//     SIGCHLD may stand for many exits.
//   - rdzv_watch_loop(): the rendezvous says the round must end (a node joined or left, or a
//     peer's group failed). Each loop carries the round's generation so a late wake-up from an
//     old round is ignored.
//   - the clock (the util::Clock seam): stop_workers() waits with deadlines for its
//     escalation steps.
//   - the file-timer watchdog (the Watchdog seam, optional): a worker's timer ran out. When
//     the timer's signal will end the worker, every rank's stack is taken first; then the
//     supervisor sends the signal to that worker's whole process group through the launcher
//     (torchrun kills the pid alone; the group also ends the worker's DataLoader children at
//     once, as any stop does) and remembers the reason for the failure report. Only pids of
//     this round's workers are signalled: the FIFO is a file any local process may write to,
//     and it must not become a way to kill arbitrary processes.
//   - the stall watchdog (--stall-timeout): monitor() waits for events with a deadline at
//     the last output / file-timer request plus the timeout (supervisor_hang.cpp); with
//     `auto` it also wakes each sample interval to learn the gaps (stall_estimator.hpp).
// monitor() consumes events until the round's outcome is known; next_step() (pure) decides
// what follows. Stopping always signals whole process groups, including groups whose leader
// already exited, and finishes only when every group is empty, so no grandchild survives.

#include "ddprun/agent/supervisor.hpp"

#include "ddprun/util/exit_status.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>

namespace ddprun::agent {

namespace {

/// How long an agent stopped by a signal tries to leave the rendezvous before it exits anyway.
constexpr std::chrono::milliseconds k_leave_bound{3000};

Outcome outcome_of(RdzvSignal s) {
  switch (s) {
    case RdzvSignal::peer_failed:
    case RdzvSignal::closed:  // the run was closed (finished, shut down, a crash loop)
      return Outcome::peer_failed;
    case RdzvSignal::store_lost:
      return Outcome::store_lost;
    case RdzvSignal::none:
    case RdzvSignal::membership_changed:
    case RdzvSignal::stacks_requested:  // handled before: the round goes on
      break;
  }
  return Outcome::membership_changed;
}

}  // namespace

Supervisor::Supervisor(asio::io_context& ctx, const config::WorkerGroup& group,
                       const config::SupervisorOptions& cfg, const config::WorkerCommand& command,
                       const config::HostPlan& host, const rdzv::RdzvSettings& rdzv_settings,
                       util::Env agent_env, process::Launcher& launcher, const util::Clock& clock,
                       Rendezvous& rdzv, WorkerIo& io, SupervisorHooks hooks)
    : ctx_(ctx),
      group_(group),
      cfg_(cfg),
      command_(command),
      host_(host),
      rdzv_settings_(rdzv_settings),
      agent_env_(std::move(agent_env)),
      launcher_(launcher),
      clock_(clock),
      rdzv_(rdzv),
      io_(io),
      hooks_(std::move(hooks)),
      signals_(ctx, SIGCHLD),
      events_(ctx, clock),
      job_stacks_(no_peers_, hooks_.stacks_taken) {
  for (int sig : cfg_.signals_to_handle) {
    signals_.add(sig);
  }
}

asio::awaitable<void> Supervisor::signal_loop() {
  while (true) {
    boost::system::error_code ec;
    int sig = co_await signals_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      co_return;
    }
    if (sig != SIGCHLD) {
      events_.push(Event{.kind = Event::Kind::agent_signal, .signal = sig});
      continue;
    }
    for (const auto& r : launcher_.reap_exited()) {
      events_.push(Event{.kind = Event::Kind::child_exited, .pid = r.pid, .status = r.status});
    }
  }
}

asio::awaitable<void> Supervisor::rdzv_watch_loop(int generation) {
  RdzvSignal s = co_await rdzv_.watch();
  if (s != RdzvSignal::none && generation == generation_) {
    events_.push(Event{.kind = Event::Kind::rdzv, .rdzv = s});
  }
}

asio::awaitable<void> Supervisor::join_round(int restart_count) {
  auto round = std::make_shared<Result<Round>>(co_await rdzv_.next_round(restart_count));
  events_.push(Event{.kind = Event::Kind::round_ready, .round = std::move(round)});
}

/// Joins the next round while still answering signals: a join can wait minutes for other
/// nodes (a spare for as long as the job runs), and a SIGTERM then must not wait with it.
/// With --health-check-interval the check also runs meanwhile. nullopt: a handled signal
/// arrived first, or the check failed (unhealthy_).
asio::awaitable<std::optional<Result<Round>>> Supervisor::next_round(int restart_count) {
  asio::co_spawn(ctx_, join_round(restart_count), asio::detached);
  while (true) {
    auto next = co_await events_.pop_until(health_due());
    const HealthTick tick = co_await on_health_event(next);
    if (tick == HealthTick::unhealthy) {
      co_return std::nullopt;
    }
    if (tick == HealthTick::handled || !next) {
      continue;
    }
    Event& ev = *next;
    if (ev.kind == Event::Kind::round_ready) {
      co_return std::move(*ev.round);
    }
    if (ev.kind == Event::Kind::agent_signal) {
      received_signal_ = ev.signal;
      spdlog::warn("Received {} death signal while joining the rendezvous; exiting",
                   process::signal_name(ev.signal));
      co_return std::nullopt;
    }
    if (ev.kind == Event::Kind::child_exited) {
      handle_child(ev.pid, ev.status);  // an orphan adopted from the previous round
    }
  }
}

/// Arms the watchdog for the new group; returns the path to export ("" without a watchdog).
Result<std::string> Supervisor::start_watchdog() {
  if (!watchdog_) {
    return std::string();
  }
  return watchdog_->start([this](TimerExpiry e) {
    events_.push(Event{.kind = Event::Kind::timer_expired,
                       .pid = e.pid,
                       .signal = e.signal,
                       .scope = std::move(e.scope_id)});
  });
}

Result<void> Supervisor::start_workers(const Round& round) {
  workers_.clear();
  failure_order_.clear();
  stall_.clear();
  job_stacks_.new_round();
  round_started_ = clock_.now();
  stall_round_started();
  auto timer_file = start_watchdog();
  if (!timer_file) {
    return timer_file.error();
  }
  auto attempt = io_.begin_attempt(round.info.restart_count, static_cast<int>(round.ranks.size()));
  if (!attempt) {
    return attempt.error();
  }
  std::vector<pid_t> pids;
  for (const auto& ranks : round.ranks) {
    auto env = worker_env(agent_env_, env_plan_, round.info, ranks,
                          WorkerFiles{io_.error_file(ranks.local_rank), *timer_file});
    auto cpus = placement_cpus(host_, ranks.local_rank);
    auto fds = io_.open(ranks);
    if (!fds) {
      return fds.error();
    }
    process::SpawnRequest req{worker_argv(command_, ranks.local_rank),
                              env.to_strings(),
                              "",
                              fds->out,
                              fds->err,
                              std::move(cpus)};
    auto pid = launcher_.spawn(req);
    io_.spawned(ranks.local_rank, pid ? *pid : 0);
    if (!pid) {
      return pid.error();
    }
    workers_.emplace_back(ranks, *pid);
    pids.push_back(*pid);
  }
  const auto& first = round.ranks.front();
  spdlog::info(
      "[{}] attempt {} of {}: {} worker(s) started, ranks {}-{} of {} (node {} of {}), "
      "master {}:{}",
      group_.role, round.info.restart_count + 1, group_.max_restarts + 1, pids.size(), first.rank,
      round.ranks.back().rank, first.world_size, first.group_rank, first.group_world_size,
      round.info.master_addr, round.info.master_port);
  if (hooks_.workers_started) {
    hooks_.workers_started(round, pids);
  }
  return {};
}

void Supervisor::handle_child(pid_t pid, int status) {
  if (watchdog_) {
    watchdog_->forget(pid);  // a dead pid's timers must not fire on a reused pid
  }
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    auto& w = workers_[i];
    if (w.pid() != pid || !w.alive()) {
      continue;
    }
    if (w.ended(process::decode_wait_status(status), clock_.wall_now())) {
      failure_order_.push_back(i);
    }
    if (hooks_.worker_exited) {
      hooks_.worker_exited(w.ranks(), pid, w.exit());
    }
    return;
  }
  spdlog::debug("reaped process {} (an orphan adopted from a worker's tree)", pid);
}

bool Supervisor::all_succeeded() const {
  for (const auto& w : workers_) {
    if (w.alive() || !w.exit().success()) {
      return false;
    }
  }
  return true;
}

asio::awaitable<Outcome> Supervisor::monitor() {
  while (true) {
    auto next = co_await events_.pop_until(std::min(watch_deadline(), health_due()));
    if (const auto tick = co_await on_health_event(next); tick != HealthTick::none) {
      if (tick == HealthTick::unhealthy) {
        co_return Outcome::failed;
      }
      continue;
    }
    if (!next) {
      if (found_stall()) {
        co_return Outcome::stalled;
      }
      continue;
    }
    Event ev = std::move(*next);
    if (ev.kind == Event::Kind::agent_signal) {
      received_signal_ = ev.signal;
      spdlog::warn("Received {} death signal, shutting down workers",
                   process::signal_name(ev.signal));
      co_return Outcome::signaled;
    }
    if (ev.kind == Event::Kind::rdzv && ev.rdzv == RdzvSignal::stacks_requested) {
      co_await answer_stacks_request();
      asio::co_spawn(ctx_, rdzv_watch_loop(generation_), asio::detached);
      continue;
    }
    if (ev.kind == Event::Kind::rdzv) {
      co_return outcome_of(ev.rdzv);
    }
    if (ev.kind == Event::Kind::timer_expired) {
      co_await handle_timer_expired(std::move(ev));
      continue;
    }
    handle_child(ev.pid, ev.status);
    if (!failure_order_.empty()) {
      // Exits reaped in the same wake-up belong to the same poll (spec §5.2).
      while (auto more = events_.try_pop()) {
        if (more->kind == Event::Kind::child_exited) {
          handle_child(more->pid, more->status);
        } else {
          events_.push(*more);
          break;
        }
      }
      co_return Outcome::failed;
    }
    if (all_succeeded()) {
      co_return Outcome::succeeded;
    }
  }
}

bool Supervisor::all_stopped() const {
  for (const auto& w : workers_) {
    if (w.alive() || launcher_.group_alive(w.pid())) {
      return false;
    }
  }
  return true;
}

void Supervisor::signal_all(int sig) {
  for (auto& w : workers_) {
    if (!w.alive() && !launcher_.group_alive(w.pid())) {
      continue;
    }
    if (sig == SIGKILL && w.alive()) {
      spdlog::warn("Unable to shutdown process {} via {}, forcefully exiting via SIGKILL", w.pid(),
                   process::signal_name(received_signal_ ? received_signal_ : SIGTERM));
    } else if (sig != SIGCONT && sig != SIGKILL && w.alive()) {
      spdlog::warn("Sending process {} closing signal {}", w.pid(), process::signal_name(sig));
    }
    w.request_stop();
    launcher_.signal_group(w.pid(), sig);
  }
}

asio::awaitable<void> Supervisor::stop_workers(int first_signal) {
  if (watchdog_) {
    watchdog_->stop();  // removes the FIFO at every group stop, like torchrun
  }
  for (const auto& step : process::make_stop_plan(first_signal, cfg_.shutdown_timeout)) {
    if (all_stopped()) {
      break;
    }
    signal_all(step.signal);
    auto deadline = clock_.now() + step.wait;
    while (!all_stopped()) {
      auto ev = co_await events_.pop_until(deadline);
      if (!ev) {
        break;
      }
      if (ev->kind == Event::Kind::child_exited) {
        handle_child(ev->pid, ev->status);
      } else if (ev->kind == Event::Kind::agent_signal && step.signal != SIGCONT) {
        spdlog::warn("Received {} again while stopping: killing workers now",
                     process::signal_name(ev->signal));
        received_signal_ = received_signal_ ? received_signal_ : ev->signal;
        break;
      }
    }
  }
  stuck_.clear();
  for (const auto& w : workers_) {
    if (!w.alive() && !launcher_.group_alive(w.pid())) {
      launcher_.forget_group(w.pid());  // the guardian must not kill a reused id later
    } else if (w.alive()) {
      stuck_.push_back(StuckWorker{w.ranks(), w.pid(), launcher_.state_of(w.pid())});
      spdlog::error("[{}] {}", group_.role, render_stuck(stuck_.back(), process::k_kill_wait));
    }
  }
}

WorkerFailure Supervisor::failure_of(const WorkerRecord& w, std::string reason) const {
  const int lr = w.ranks().local_rank;
  return WorkerFailure{
      w.ranks(),           w.pid(),          w.exit(), w.exit_time(), io_.error_file(lr),
      io_.stderr_tail(lr), std::move(reason)};
}

std::vector<WorkerFailure> Supervisor::collect_failures() const {
  std::vector<WorkerFailure> out;
  for (auto i : failure_order_) {
    out.push_back(failure_of(workers_[i], workers_[i].timer_reason()));
  }
  if (out.empty() && !stall_.empty() && !workers_.empty()) {
    // A stall has no failed worker: the first one that had not finished stands for it.
    auto it = std::find_if(workers_.begin(), workers_.end(),
                           [](const WorkerRecord& x) { return !x.exit().success(); });
    out.push_back(failure_of(it != workers_.end() ? *it : workers_.front(), stall_));
  }
  return out;
}

/// This node was left out of the job: it lets go of the rendezvous (a store host serves the
/// others until the job ends) and exits; a handled signal ends the wait.
asio::awaitable<int> Supervisor::leave_job(const std::string& why) {
  spdlog::error("[{}] {}; this agent exits with status {}", group_.role, why,
                util::k_exit_excluded);
  asio::co_spawn(ctx_, withdraw(), asio::detached);
  if (const int sig = co_await until_left(util::SteadyTime::max()); sig > 0) {
    spdlog::warn("Received {} while letting go of the rendezvous; exiting",
                 process::signal_name(sig));
  }
  co_return util::k_exit_excluded;
}

asio::awaitable<void> Supervisor::withdraw() {
  co_await rdzv_.withdraw();
  events_.push(Event{Event::Kind::left});
}

asio::awaitable<void> Supervisor::leave_round() {
  co_await rdzv_.leave(k_leave_bound);
  events_.push(Event{Event::Kind::left});
}

/// Reaps exited children until the rendezvous op spawned before says it is done (the `left`
/// event): 0 then; the signal when a handled one comes first; -1 at `deadline`.
asio::awaitable<int> Supervisor::until_left(util::SteadyTime deadline) {
  while (auto ev = co_await events_.pop_until(deadline)) {
    if (ev->kind == Event::Kind::left) {
      co_return 0;
    }
    if (ev->kind == Event::Kind::child_exited) {
      handle_child(ev->pid, ev->status);
    } else if (ev->kind == Event::Kind::agent_signal) {
      co_return ev->signal;
    }
  }
  co_return -1;
}

/// After a handled signal: leave the rendezvous so the other nodes re-form now rather than
/// after the keep-alive bound. Bounded: a store that does not answer, or a second signal,
/// must not hold up the exit.
asio::awaitable<void> Supervisor::leave_rendezvous() {
  asio::co_spawn(ctx_, leave_round(), asio::detached);
  const int sig = co_await until_left(clock_.now() + k_leave_bound);
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

asio::awaitable<int> Supervisor::finish(Step step) {
  if (step == Step::exit_signaled) {
    co_await stop_workers(received_signal_);
    co_await io_.drain(std::chrono::seconds(2));
    co_await leave_rendezvous();
    co_return util::exit_for_signal(received_signal_);
  }
  if (step == Step::exit_store_lost) {
    spdlog::error("[{}] stopping the workers and exiting: lost the store of the {}", group_.role,
                  rdzv_.describe());
    co_await stop_workers(SIGTERM);
    co_await io_.drain(std::chrono::seconds(5));
    co_return util::k_exit_failure;
  }
  co_await stop_workers(SIGTERM);
  co_await io_.drain(std::chrono::seconds(5));
  if (step == Step::finish_success) {
    co_return co_await finish_success();
  }
  const auto hint = co_await report_group_failure();
  if (hooks_.failed) {
    hooks_.failed(collect_failures());
  }
  if (hint) {
    spdlog::warn("[{}] {}", group_.role, *hint);
  }
  co_await rdzv_.exit_barrier(false);
  co_await rdzv_.shutdown();
  co_return util::k_exit_failure;
}

/// This node's workers succeeded: the exit barrier waits for the other nodes (up to
/// --exit-barrier-timeout) and the run is closed. A handled signal ends that wait: the job has
/// not finished, so the agent exits as any agent stopped by a signal does, never with 0.
asio::awaitable<int> Supervisor::finish_success() {
  asio::co_spawn(ctx_, close_after_success(), asio::detached);
  if (const int sig = co_await until_left(util::SteadyTime::max()); sig > 0) {
    received_signal_ = sig;
    spdlog::warn("Received {} death signal while waiting for the other nodes to finish; exiting",
                 process::signal_name(sig));
    co_return util::exit_for_signal(sig);
  }
  co_return util::k_exit_success;
}

asio::awaitable<void> Supervisor::close_after_success() {
  co_await rdzv_.exit_barrier(true);
  co_await rdzv_.shutdown();
  events_.push(Event{Event::Kind::left});
}

/// No round formed: the rendezvous failed (exit 1), or the job stopped because restarting
/// would not help (a crash loop: the last attempt's failures are the job's, exit 3).
int Supervisor::end_without_round(const Error& error) {
  if (error.code == ErrorCode::not_needed) {
    spdlog::info("[{}] {}: the job did not need it", group_.role, error.message);
    return util::k_exit_success;
  }
  if (error.code == ErrorCode::finished_without) {  // it came back after the end
    spdlog::warn("[{}] {}; this agent exits with status {}", group_.role, error.message,
                 util::k_exit_success);
    return util::k_exit_success;
  }
  if (error.code != ErrorCode::given_up) {
    spdlog::error("rendezvous failed: {}", error.message);
    return util::k_exit_failure;
  }
  spdlog::error("[{}] {}; this agent exits with status {} (do not requeue)", group_.role,
                error.message, util::k_exit_do_not_requeue);
  if (hooks_.gave_up) {
    hooks_.gave_up(error.message);
  }
  if (hooks_.failed && !workers_.empty()) {
    hooks_.failed(collect_failures());
  }
  return util::k_exit_do_not_requeue;
}

asio::awaitable<int> Supervisor::run() {
  launcher_.become_subreaper();
  asio::co_spawn(ctx_, signal_loop(), asio::detached);
  int restarts = 0;  // failed attempts so far: this agent's, or the job's (multi-node)
  while (true) {
    phase_ = "rendezvous";
    restart_count_ = restarts;
    if (auto unhealthy = co_await check_before_join(); unhealthy) {
      co_return *unhealthy;
    }
    auto joined = co_await next_round(restarts);
    if (!joined) {
      co_await leave_rendezvous();
      if (!unhealthy_.healthy) {  // the check failed while this node waited
        co_return co_await leave_unhealthy(unhealthy_);
      }
      co_return util::k_exit_failure;
    }
    auto& round = *joined;
    if (!round) {
      co_return end_without_round(round.error());
    }
    restarts = restart_count_ = round->info.restart_count;
    const int remaining = std::max(0, group_.max_restarts - restarts);
    if (auto started = start_workers(*round); !started) {
      spdlog::error("{}", started.error().message);
      co_await stop_workers(SIGTERM);
      co_return util::k_exit_failure;
    }
    asio::co_spawn(ctx_, rdzv_watch_loop(++generation_), asio::detached);
    phase_ = "running";
    Outcome outcome = co_await monitor();
    if (!unhealthy_.healthy) {
      co_return co_await fail_unhealthy_group();
    }
    phase_ = "stopping";
    Step step = next_step(outcome, remaining);
    if (outcome == Outcome::stalled) {
      co_await take_stacks(stall_, true);
    } else if (outcome == Outcome::failed && cfg_.stacks_on_failure) {
      co_await take_stacks(failure_reason(), false);
    }
    if (hooks_.round_ended) {
      hooks_.round_ended(outcome, step, remaining);
    }
    if (step != Step::restart && step != Step::restart_free) {
      phase_ = "finished";
      co_return co_await finish(step);
    }
    if (step == Step::restart && outcome == Outcome::failed && hooks_.attempt_failed) {
      hooks_.attempt_failed(collect_failures());
    }
    if (step == Step::restart) {
      spdlog::warn("[{}] Worker group {}. {}/{} attempts left; will restart worker group",
                   group_.role, to_string(outcome), remaining, group_.max_restarts);
      ++restarts;  // a multi-node rendezvous sets the job's count with the next round
    } else {
      spdlog::info("[{}] membership changed; will restart worker group", group_.role);
    }
    // Reported before the stop: the other nodes restart sooner, and when several nodes fail
    // the rendezvous settles which failure came first while this group stops.
    const bool failed_here = outcome == Outcome::failed || outcome == Outcome::stalled;
    if (failed_here) {
      if (const auto hint = co_await report_group_failure(); hint && step == Step::restart) {
        spdlog::warn("[{}] {}", group_.role, *hint);
      }
    }
    co_await stop_workers(SIGTERM);
    co_await io_.drain(std::chrono::seconds(5));
    if (!stuck_.empty()) {  // no new group beside workers that cannot be killed
      co_return co_await leave_unhealthy(unkillable_verdict(stuck_, process::k_kill_wait));
    }
    if (failed_here) {
      if (auto why = co_await rdzv_.exclusion(); !why.empty()) {
        co_return co_await leave_job(why);
      }
    }
  }
}

}  // namespace ddprun::agent
