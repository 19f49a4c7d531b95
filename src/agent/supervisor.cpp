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
// Each producer queues its own alternative of Event (supervisor_events.hpp). monitor()
// consumes them, with std::visit, until the round's outcome is known; next_step() (pure)
// decides what follows, after_round() carries it out. Stopping always signals whole process groups,
// including groups whose leader already exited, and finishes only when every group is empty, so no
// grandchild survives.

#include "ddprun/agent/supervisor.hpp"

#include "ddprun/util/exit_status.hpp"
#include "ddprun/util/overloaded.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>

namespace ddprun::agent {

Supervisor::Supervisor(asio::io_context& ctx, SupervisorPlan plan, SupervisorSeams seams,
                       SupervisorHooks hooks)
    : ctx_(ctx),
      plan_(std::move(plan)),
      seams_(seams),
      hooks_(std::move(hooks)),
      signals_(ctx, SIGCHLD),
      events_(ctx, seams_.clock),
      job_stacks_(seams_.peers != nullptr ? *seams_.peers : no_peers_, hooks_.stacks_taken),
      health_(ctx, plan_.options.health, plan_.group.role, seams_.launcher, seams_.clock,
              plan_.agent_env, seams_.gpu_memory, events_,
              [this](const ChildExited& child) { reap(child); }),
      stall_(plan_.options, plan_.group.role, seams_.clock, hooks_.stall_timeout_changed) {
  for (int sig : plan_.options.signals_to_handle) {
    signals_.add(sig);
  }
  if (seams_.stacks != nullptr) {
    job_stacks_.set_capture(*seams_.stacks);
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
      events_.push(AgentSignal{sig});
      continue;
    }
    for (const auto& r : seams_.launcher.reap_exited()) {
      events_.push(ChildExited{r.pid, r.status});
    }
  }
}

asio::awaitable<void> Supervisor::rdzv_watch_loop(int generation) {
  RdzvSignal s = co_await seams_.rdzv.watch();
  if (s != RdzvSignal::none && generation == generation_) {
    events_.push(RdzvNews{s});
  }
}

asio::awaitable<void> Supervisor::join_round(int restart_count) {
  auto round = std::make_shared<Result<Round>>(co_await seams_.rdzv.next_round(restart_count));
  events_.push(RoundReady{std::move(round)});
}

/// Joins the next round while still answering signals: a join can wait minutes for other
/// nodes (a spare for as long as the job runs), and a SIGTERM then must not wait with it.
/// With --health-check-interval the check also runs meanwhile. nullopt: a handled signal
/// arrived first, or the check failed (NodeHealth::failure()).
asio::awaitable<std::optional<Result<Round>>> Supervisor::next_round(int restart_count) {
  asio::co_spawn(ctx_, join_round(restart_count), asio::detached);
  while (true) {
    auto next = co_await events_.pop_until(health_.due(round_started_));
    const auto tick = co_await health_.on_event(next, round_started_);
    if (tick == NodeHealth::Tick::unhealthy) {
      co_return std::nullopt;
    }
    if (tick == NodeHealth::Tick::handled || !next) {
      continue;
    }
    if (auto* ready = std::get_if<RoundReady>(&*next)) {
      co_return std::move(*ready->round);
    }
    if (const auto* sig = std::get_if<AgentSignal>(&*next)) {
      received_signal_ = sig->signal;
      spdlog::warn("Received {} death signal while joining the rendezvous; exiting",
                   process::signal_name(sig->signal));
      co_return std::nullopt;
    }
    if (const auto* child = std::get_if<ChildExited>(&*next)) {
      reap(*child);  // an orphan adopted from the previous round
    }
  }
}

Result<void> Supervisor::start_workers(const Round& round) {
  workers_.clear();
  job_stacks_.new_round();
  round_started_ = seams_.clock.now();
  stall_.round_started(round_started_);
  Result<std::string> timer_file = std::string();  // exported as TORCHELASTIC_TIMER_FILE
  if (seams_.watchdog != nullptr) {
    timer_file = seams_.watchdog->start([this](TimerExpiry e) {
      events_.push(TimerExpired{e.pid, e.signal, std::move(e.scope_id)});
    });
  }
  if (!timer_file) {
    return timer_file.error();
  }
  auto& io = seams_.io;
  auto attempt = io.begin_attempt(round.info.restart_count, static_cast<int>(round.ranks.size()));
  if (!attempt) {
    return attempt.error();
  }
  std::vector<pid_t> pids;
  for (const auto& ranks : round.ranks) {
    auto env = worker_env(plan_.agent_env, plan_.env_plan, round.info, ranks,
                          WorkerFiles{io.error_file(ranks.local_rank), *timer_file});
    auto fds = io.open(ranks);
    if (!fds) {
      return fds.error();
    }
    process::SpawnRequest req{
        worker_argv(plan_.command, ranks.local_rank), env.to_strings(), "", fds->out, fds->err,
        placement_cpus(plan_.host, ranks.local_rank)};
    auto pid = seams_.launcher.spawn(req);
    io.spawned(ranks.local_rank, pid ? *pid : 0);
    if (!pid) {
      return pid.error();
    }
    workers_.add(ranks, *pid);
    pids.push_back(*pid);
  }
  const auto& first = round.ranks.front();
  spdlog::info(
      "[{}] attempt {} of {}: {} worker(s) started, ranks {}-{} of {} (node {} of {}), "
      "master {}:{}",
      plan_.group.role, round.info.restart_count + 1, plan_.group.max_restarts + 1, pids.size(),
      first.rank, round.ranks.back().rank, first.world_size, first.group_rank,
      first.group_world_size, round.info.master_addr, round.info.master_port);
  if (hooks_.workers_started) {
    hooks_.workers_started(round, pids);
  }
  return {};
}

void Supervisor::reap(const ChildExited& child) {
  if (seams_.watchdog != nullptr) {
    seams_.watchdog->forget(child.pid);  // a dead pid's timers must not fire on a reused pid
  }
  const auto* w =
      workers_.ended(child.pid, process::decode_wait_status(child.status), seams_.clock.wall_now());
  if (w == nullptr) {
    spdlog::debug("reaped process {} (an orphan adopted from a worker's tree)", child.pid);
  } else if (hooks_.worker_exited) {
    hooks_.worker_exited(w->ranks(), child.pid, w->exit());
  }
}

asio::awaitable<Outcome> Supervisor::monitor() {
  while (true) {
    auto next = co_await events_.pop_until(
        std::min(stall_.wake_deadline(progress()), health_.due(round_started_)));
    if (const auto tick = co_await health_.on_event(next, round_started_);
        tick != NodeHealth::Tick::none) {
      if (tick == NodeHealth::Tick::unhealthy) {
        co_return Outcome::failed;
      }
      continue;
    }
    if (!next) {
      if (stall_.check(progress())) {
        co_return Outcome::stalled;
      }
      continue;
    }
    if (const auto outcome = co_await during_round(*next)) {
      co_return *outcome;
    }
  }
}

/// One event while the workers run: the round's outcome once it is known.
asio::awaitable<std::optional<Outcome>> Supervisor::during_round(Event& ev) {
  if (const auto* timer = std::get_if<TimerExpired>(&ev)) {
    co_await on_timer_expired(*timer);
    co_return std::nullopt;
  }
  if (const auto* news = std::get_if<RdzvNews>(&ev);
      news != nullptr && news->signal == RdzvSignal::stacks_requested) {
    // Another node asks: this node's stacks (taken once per round) go back to it.
    auto targets = job_stacks_.can_take() ? workers_.stack_targets() : std::vector<StackTarget>{};
    co_await job_stacks_.answer(std::move(targets), plan_.group.role);
    asio::co_spawn(ctx_, rdzv_watch_loop(generation_), asio::detached);
    co_return std::nullopt;
  }
  co_return std::visit(
      util::Overloaded{
          [this](const AgentSignal& e) -> std::optional<Outcome> {
            received_signal_ = e.signal;
            spdlog::warn("Received {} death signal, shutting down workers",
                         process::signal_name(e.signal));
            return Outcome::signaled;
          },
          [](const RdzvNews& e) -> std::optional<Outcome> { return outcome_of(e.signal); },
          [this](const ChildExited& e) -> std::optional<Outcome> {
            reap(e);
            if (workers_.failed()) {
              // Exits reaped in the same wake-up belong to the same poll (spec §5.2).
              while (auto more = events_.try_pop()) {
                if (const auto* child = std::get_if<ChildExited>(&*more)) {
                  reap(*child);
                } else {
                  events_.push(std::move(*more));
                  break;
                }
              }
              return Outcome::failed;
            }
            return workers_.all_succeeded() ? std::optional(Outcome::succeeded) : std::nullopt;
          },
          [](const auto&) -> std::optional<Outcome> { return std::nullopt; }},
      ev);
}

asio::awaitable<int> Supervisor::run() {
  seams_.launcher.become_subreaper();
  asio::co_spawn(ctx_, signal_loop(), asio::detached);
  int restarts = 0;  // failed attempts so far: this agent's, or the job's (multi-node)
  while (true) {
    phase_ = GroupPhase::rendezvous;
    restart_count_ = restarts;
    if (auto unhealthy = co_await check_before_join(); unhealthy) {
      co_return *unhealthy;
    }
    auto joined = co_await next_round(restarts);
    if (!joined) {
      co_await leave_rendezvous();
      if (!health_.failure().healthy) {  // the check failed while this node waited
        co_return co_await leave_unhealthy(health_.failure());
      }
      co_return util::k_exit_failure;
    }
    auto& round = *joined;
    if (!round) {
      co_return end_without_round(round.error());
    }
    restarts = restart_count_ = round->info.restart_count;
    if (auto started = start_workers(*round); !started) {
      spdlog::error("{}", started.error().message);
      co_await stop_workers(SIGTERM);
      co_return util::k_exit_failure;
    }
    asio::co_spawn(ctx_, rdzv_watch_loop(++generation_), asio::detached);
    phase_ = GroupPhase::running;
    const Outcome outcome = co_await monitor();
    if (!health_.failure().healthy) {
      co_return co_await fail_unhealthy_group();
    }
    if (auto exit = co_await after_round(outcome, restarts)) {
      co_return *exit;
    }
  }
}

/// The round ended with `outcome`: the job's exit code, or nullopt to join the next round
/// (`restarts` counts a failure that restarts the group).
asio::awaitable<std::optional<int>> Supervisor::after_round(Outcome outcome, int& restarts) {
  phase_ = GroupPhase::stopping;
  const int remaining = std::max(0, plan_.group.max_restarts - restarts);
  const Step step = next_step(outcome, remaining);
  if (outcome == Outcome::stalled) {
    co_await take_stacks(stall_.reason(), true);
  } else if (outcome == Outcome::failed && plan_.options.stacks_on_failure) {
    co_await take_stacks(workers_.failure_reason(), false);
  }
  if (hooks_.round_ended) {
    hooks_.round_ended(outcome, step, remaining);
  }
  if (step != Step::restart && step != Step::restart_free) {
    phase_ = GroupPhase::finished;
    co_return co_await finish(step);
  }
  const bool failed_here = outcome == Outcome::failed || outcome == Outcome::stalled;
  if (step == Step::restart) {
    if (outcome == Outcome::failed && hooks_.attempt_failed) {
      hooks_.attempt_failed(failures());
    }
    spdlog::warn("[{}] Worker group {}. {}/{} attempts left; will restart worker group",
                 plan_.group.role, to_string(outcome), remaining, plan_.group.max_restarts);
    ++restarts;  // a multi-node rendezvous sets the job's count with the next round
  } else {
    spdlog::info("[{}] membership changed; will restart worker group", plan_.group.role);
  }
  // Reported before the stop: the other nodes restart sooner, and when several nodes fail
  // the rendezvous settles which failure came first while this group stops.
  if (failed_here) {
    if (const auto hint = co_await report_group_failure(); hint && step == Step::restart) {
      spdlog::warn("[{}] {}", plan_.group.role, *hint);
    }
  }
  co_await stop_workers(SIGTERM);
  co_await seams_.io.drain(std::chrono::seconds(5));
  if (!stuck_.empty()) {  // no new group beside workers that cannot be killed
    co_return co_await leave_unhealthy(unkillable_verdict(stuck_, process::k_kill_wait));
  }
  if (failed_here) {
    if (auto why = co_await seams_.rdzv.exclusion(); !why.empty()) {
      co_return co_await leave_job(why);
    }
  }
  co_return std::nullopt;
}

}  // namespace ddprun::agent
