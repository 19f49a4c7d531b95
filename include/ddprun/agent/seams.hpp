#pragma once
// The agent's seams: where a round's membership comes from (Rendezvous), where workers'
// output goes (WorkerIo) and how the stacks of hung workers are taken (StackCapture). The
// supervisor drives them; tests substitute fakes.

#include "ddprun/agent/file_timer.hpp"
#include "ddprun/agent/worker_spec.hpp"
#include "ddprun/errors/stacks.hpp"
#include "ddprun/net/asio.hpp"
#include "ddprun/rdzv/run_signal.hpp"
#include "ddprun/rdzv/state.hpp"
#include "ddprun/util/clock.hpp"
#include "ddprun/util/result.hpp"

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace ddprun::agent {

/// One formed round: the values every worker shares and this node's workers' ranks.
struct Round {
  RoundInfo info;
  std::vector<WorkerRanks> ranks;
  int round_number = 0;
};

/// What a rendezvous raises while workers run: the rendezvous core's own answer, passed on
/// as it is (rdzv/run_signal.hpp). closed and peer_failed end the round as a peer's failure,
/// store_lost ends the job (the store's host died or is cut off), stacks_requested asks for
/// this node's stacks through the StackExchange seam (stack_exchange.hpp) and the round goes on.
using RdzvSignal = rdzv::RunSignal;

/// What a node tells the others when its group failed or stalled.
struct FailureNote {
  std::chrono::system_clock::time_point at;  ///< its first worker's failure, or the stall
  std::string reason;                        ///< "rank 3 failed (exitcode: 1)"
  /// How it failed, to tell a repeated failure: "rank 3: exitcode 1: ValueError: bad value"
  /// (empty: a peer's failure, no claim here).
  std::string signature{};
  bool quick = false;  ///< the attempt failed within --crash-loop-window of its start
};

class Rendezvous {
 public:
  virtual ~Rendezvous() = default;
  /// Joins the next round. `restart_count` is this agent's failure-restart count; a multi-node
  /// rendezvous uses the job's instead (Round::info.restart_count). ErrorCode::given_up: the
  /// job stopped because restarting would not help (a crash loop), with the reason.
  virtual asio::awaitable<Result<Round>> next_round(int restart_count) = 0;
  /// Completes when the rendezvous needs the running round to end (or never).
  virtual asio::awaitable<RdzvSignal> watch() = 0;
  /// Tells peers this node's group failed, so they restart together. Of several nodes
  /// reporting one round, the earliest failure is the round's root cause. Returns the job's
  /// crash streak after the report (crash_loop.hpp; empty when it could not be told).
  virtual asio::awaitable<rdzv::CrashStreak> report_failure(FailureNote note) = 0;
  /// After report_failure(), once the group stopped: why this node is left out of the job (it
  /// was the root cause of --rdzv-conf max_node_failures failed rounds in a row and the
  /// others can go on without it), or "" when it stays. A node left out must not join again:
  /// it calls withdraw() and exits.
  virtual asio::awaitable<std::string> exclusion() { co_return std::string(); }
  /// A node left out of the job lets go of the rendezvous, without closing it. A node that
  /// hosts the others' rendezvous store keeps serving it until the job ends.
  virtual asio::awaitable<void> withdraw() { co_return; }
  /// This node failed its health checks and is about to withdraw(): records `reason` where the
  /// others and `ddprun status` see it (a node alone has no one to tell).
  virtual asio::awaitable<void> mark_unhealthy(std::string /*reason*/) { co_return; }
  /// Waits (bounded) for every node to finish before the store host may exit.
  virtual asio::awaitable<void> exit_barrier(bool success) = 0;
  /// Closes the rendezvous for late joiners (not called when stopped by a signal).
  virtual asio::awaitable<void> shutdown() = 0;
  /// Stopped by a signal: leaves the rendezvous so peers re-form at once, trying for at most
  /// `bound`. The caller bounds its own wait too (a store call may block longer).
  virtual asio::awaitable<void> leave(std::chrono::milliseconds bound) = 0;
  virtual std::string describe() const = 0;
  /// This node waits on the rendezvous' wait list as a spare (the metrics' spare gauge).
  virtual bool standing_by() const { return false; }
};

/// File descriptors for a child's stdout and stderr (-1: inherit the agent's).
struct ChildFds {
  int out = -1;
  int err = -1;
};

class WorkerIo {
 public:
  virtual ~WorkerIo() = default;
  /// Prepares attempt_<attempt>/ (wiped and re-created) for `nproc` workers.
  virtual Result<void> begin_attempt(int attempt, int nproc) = 0;
  /// TORCHELASTIC_ERROR_FILE for a worker of the current attempt ("" when files are off).
  virtual std::string error_file(int local_rank) const = 0;
  virtual Result<ChildFds> open(const WorkerRanks& ranks) = 0;
  /// Called once the child runs: closes the agent's copies of the child ends.
  virtual void spawned(int local_rank, pid_t pid) = 0;
  /// Waits until every worker pipe reached EOF, at most `max_wait`.
  virtual asio::awaitable<void> drain(std::chrono::milliseconds max_wait) = 0;
  /// Last lines the worker wrote to stderr, when its stderr passed through the agent.
  virtual std::vector<std::string> stderr_tail(int local_rank) const = 0;
  /// Up to the last `n` lines of the worker's stderr (when the agent reads it or it goes to
  /// a file): where a faulthandler dump lands.
  virtual std::vector<std::string> stderr_lines(int /*local_rank*/, std::size_t /*n*/) const {
    return {};
  }
  /// The run directory (`<log_dir>/<run_id>_xxxx`), empty when files are off.
  virtual std::string run_dir() const = 0;
  /// When a worker last wrote to a stream the agent reads (the epoch: never, or not read).
  virtual util::SteadyTime last_output() const { return {}; }
};

/// The file-timer watchdog (spec §8.3) as the supervisor sees it: armed for each worker
/// group, it reports timers that ran out; the supervisor decides what to signal.
class Watchdog {
 public:
  virtual ~Watchdog() = default;
  /// Opens the channel for a new worker group; returns the path exported to the workers as
  /// TORCHELASTIC_TIMER_FILE. `on_expired` is called on the agent's io_context.
  virtual Result<std::string> start(std::function<void(TimerExpiry)> on_expired) = 0;
  /// The process `pid` exited: its timers no longer count.
  virtual void forget(pid_t pid) = 0;
  /// Group stop: closes and removes the channel and drops every timer.
  virtual void stop() = 0;
  /// When a worker last sent a well-formed request (the epoch: never).
  virtual util::SteadyTime last_request() const { return {}; }
};

/// A still-running worker whose stack is wanted.
struct StackTarget {
  WorkerRanks ranks;
  pid_t pid = 0;
  /// The capture must not end it: an expired file timer's worker, whose own signal ends it
  /// as under torchrun. A capture that would (faulthandler) reads its /proc state instead.
  bool keep_running = false;
};

/// What a capture found: this node's ranks, or, for a job-wide report, every node's merged.
struct StackReport {
  std::string reason;
  std::string method;  ///< "faulthandler", "py-spy", "eu-stack", "gdb", "/proc"
  std::vector<errors::StackGroup> groups;
  std::vector<std::string> files;  ///< this node's stacks.txt, one per rank captured
  int nodes = 1;                   ///< nodes whose answer is in `groups`
  std::vector<std::string> missing_nodes;
  bool stall = false;  ///< taken because the group stalled
};

/// Takes the stacks of still-running workers before they are stopped (a failure with
/// --stacks-on-failure, an expired timer, a stall), bounded in time. It may end a worker (a
/// Python worker's faulthandler dumps on a fatal signal), never one marked keep_running:
/// callers capture only workers they stop anyway, and mark them stop-requested first, so such
/// an exit is no new failure.
class StackCapture {
 public:
  virtual ~StackCapture() = default;
  /// `reason` says why, for the report ("rank 0 failed"). Writes each rank's stacks.txt and
  /// returns what it found; printing is the caller's (one report for the whole job). A
  /// non-zero `hold` freezes the targets (SIGSTOP) for that long first: a multi-node capture,
  /// where every node must hold its ranks before any node's capture ends its own.
  virtual asio::awaitable<StackReport> capture(std::vector<StackTarget> targets, std::string reason,
                                               std::chrono::milliseconds hold) = 0;
};

}  // namespace ddprun::agent
