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
// Stacks, at most once per round: this node asks the other nodes through the rendezvous,
// takes its own workers' stacks meanwhile, publishes its answer (a node that detected the
// same hang at the same moment reads it from there), then collects the others' answers for a
// bounded time and prints one report for the job, naming the nodes that did not answer.
// Targets are marked stop-requested first, since taking a stack may end a worker.

#include "ddprun/agent/stack_capture.hpp"
#include "ddprun/agent/supervisor.hpp"
#include "ddprun/errors/failure.hpp"
#include "ddprun/host/facts.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace ddprun::agent {

namespace {

std::string seconds_text(std::chrono::milliseconds d) {
  return fmt::format("{:g}", static_cast<double>(d.count()) / 1000.0);
}

errors::NodeStacks node_stacks(const StackReport& r) {
  return errors::NodeStacks{host::host_fqdn(), r.method, r.groups, r.files};
}

/// The report on stderr: one line saying why and where the full stacks are, one per group,
/// and the nodes that did not answer.
void log_stack_report(const StackReport& r) {
  std::string where = "<none>";
  if (!r.files.empty()) {
    const auto dir = r.files.front().substr(0, r.files.front().rfind('/'));
    where = r.files.size() == 1 ? r.files.front()
                                : dir.substr(0, dir.rfind('/')) + "/<local_rank>/stacks.txt";
  }
  const std::string nodes =
      r.nodes > 1 ? " on " + std::to_string(r.nodes) + " nodes" : std::string();
  spdlog::warn("stacks of the ranks still running{} [{}] ({}; full stacks in {}{}):", nodes,
               r.reason, r.method, where, r.nodes > 1 ? " on each node" : "");
  for (const auto& line : errors::render_stack_report(r.groups)) {
    spdlog::warn("  {}", line);
  }
  for (const auto& node : r.missing_nodes) {
    spdlog::warn("  {}: did not answer (its stacks are missing from this report)", node);
  }
}

}  // namespace

util::SteadyTime Supervisor::stall_deadline() const {
  const bool watched = std::any_of(workers_.begin(), workers_.end(),
                                   [](const Worker& w) { return w.running && !w.stop_requested; });
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
    s.workers_running += w.running ? 1 : 0;
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
    if (w.running) {
      w.stop_requested = true;
      targets.push_back(StackTarget{w.ranks, w.pid, w.pid == keep_running});
    }
  }
  return targets;
}

asio::awaitable<void> Supervisor::take_stacks(std::string reason, bool stall, pid_t keep_running) {
  if (stacks_ == nullptr || my_stacks_) {
    co_return;
  }
  auto targets = stack_targets(keep_running);
  const bool asked_others = co_await rdzv_.request_stacks(reason);
  StackReport report;
  if (!targets.empty()) {
    report = co_await stacks_->capture(std::move(targets), reason,
                                       asked_others ? k_freeze_hold : std::chrono::milliseconds(0));
  }
  my_stacks_ = node_stacks(report);
  co_await rdzv_.answer_stacks(*my_stacks_);
  auto peers = co_await rdzv_.collect_stacks(k_peer_stacks_bound);
  if (!peers.answers.empty() || !peers.missing.empty()) {
    peers.answers.push_back(*my_stacks_);
    report.groups = errors::merge_stack_groups(peers.answers);
    report.nodes = static_cast<int>(peers.answers.size());
    report.missing_nodes = std::move(peers.missing);
  }
  report.reason = std::move(reason);
  report.stall = stall;
  if (report.groups.empty() && report.missing_nodes.empty()) {
    co_return;  // nothing was running anywhere
  }
  log_stack_report(report);
  if (hooks_.stacks_taken) {
    hooks_.stacks_taken(report);
  }
}

/// Another node asks: take this node's stacks (once per round) and answer with them. The
/// report is that node's to print; this one says where its full stacks are.
asio::awaitable<void> Supervisor::answer_stacks_request() {
  const auto reason = rdzv_.stacks_request();
  if (!my_stacks_) {
    auto targets = stacks_ != nullptr ? stack_targets() : std::vector<StackTarget>{};
    StackReport report;
    if (!targets.empty()) {
      report = co_await stacks_->capture(std::move(targets), reason + " (asked by another node)",
                                         k_freeze_hold);
      spdlog::warn("[{}] another node asked for every rank's stack ({}): took {} rank(s) with {}",
                   cfg_.role, reason, report.files.size(), report.method);
      if (hooks_.stacks_taken) {
        hooks_.stacks_taken(report);
      }
    }
    my_stacks_ = node_stacks(report);
  }
  co_await rdzv_.answer_stacks(*my_stacks_);
}

/// The worker's timer ran out. Its stack and the others' are taken first when the timer's
/// signal ends it (the group then fails); a signal it catches (a handler dumping its own
/// state) is sent alone, as torchrun does. workers_ is not resized while a round runs, so the
/// index stays valid across the capture.
asio::awaitable<void> Supervisor::handle_timer_expired(Event ev) {
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    if (workers_[i].pid != ev.pid || !workers_[i].running) {
      continue;
    }
    auto& w = workers_[i];
    w.expired = true;
    w.watchdog_reason = "watchdog timer \"" + ev.scope + "\" expired";
    w.watchdog_signal = ev.signal;
    const bool capture =
        stacks_ != nullptr && !my_stacks_ && launcher_.signal_ends(w.pid, ev.signal);
    spdlog::error("[{}] {} for local_rank {} (pid {}); {}sending {} to its process group",
                  cfg_.role, w.watchdog_reason, w.ranks.local_rank, w.pid,
                  capture ? "taking the stacks, then " : "", process::signal_name(ev.signal));
    if (hooks_.watchdog_expired) {
      hooks_.watchdog_expired(w.ranks, TimerExpiry{ev.pid, ev.signal, ev.scope});
    }
    if (capture) {
      w.captured = true;
      // The capture leaves this worker to its timer's signal: it dies of it, as under torchrun.
      co_await take_stacks(w.watchdog_reason + " for rank " + std::to_string(w.ranks.rank), false,
                           w.pid);
    }
    if (workers_[i].running) {
      launcher_.signal_group(workers_[i].pid, ev.signal);
    }
    co_return;
  }
  spdlog::warn(
      "watchdog timer \"{}\" of pid {} expired, but pid {} is not a running worker "
      "of this agent; not signalled",
      ev.scope, ev.pid, ev.pid);
}

/// This group's failure for the rendezvous: its first worker's failure, or the stall.
FailureNote Supervisor::failure_note() const {
  if (!failure_order_.empty()) {
    return FailureNote{workers_[failure_order_.front()].exit_time, failure_reason()};
  }
  if (!stall_.empty()) {
    return FailureNote{stalled_at_, "worker group stalled"};
  }
  return FailureNote{clock_.wall_now(), failure_reason()};  // a peer's failure: no claim here
}

/// "rank 1 failed (exitcode: 3)": the first failure seen.
std::string Supervisor::failure_reason() const {
  if (failure_order_.empty()) {
    return "failure";
  }
  const auto& w = workers_[failure_order_.front()];
  const auto name = w.exit.signaled ? errors::signal_name(w.exit.signal) : std::string();
  return "rank " + std::to_string(w.ranks.rank) +
         " failed (exitcode: " + std::to_string(w.exit.code()) +
         (name.empty() ? std::string() : ", " + name) + ")";
}

}  // namespace ddprun::agent
