#pragma once
// GroupWorkers: the current round's workers as the supervisor tracks them (worker_state.hpp),
// in local-rank order, with the order their failures were seen in; and the group's failure as
// the report and the rendezvous read it: which failure came first, its reason
// ("rank 1 failed (exitcode: 3)") and its signature for telling a crash loop
// ("rank 1: exitcode 3: ValueError: bad value").

#include "ddprun/agent/seams.hpp"
#include "ddprun/agent/unkillable.hpp"
#include "ddprun/agent/worker_state.hpp"
#include "ddprun/process/launcher.hpp"

#include <sys/types.h>

#include <chrono>
#include <cstddef>
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

class GroupWorkers {
 public:
  /// A new round: no worker yet.
  void clear();
  void add(const WorkerRanks& ranks, pid_t pid) { workers_.emplace_back(ranks, pid); }
  std::vector<WorkerRecord>& all() { return workers_; }
  const std::vector<WorkerRecord>& all() const { return workers_; }
  bool empty() const { return workers_.empty(); }

  /// The running (not yet reaped) worker with `pid`; nullptr when none is.
  WorkerRecord* alive(pid_t pid);
  /// `pid` was reaped: its worker's record (nullptr: not a worker of this round).
  const WorkerRecord* ended(pid_t pid, const process::ExitInfo& exit,
                            std::chrono::system_clock::time_point when);
  /// A worker failed on its own (ended badly, or after its timer ran out).
  bool failed() const { return !failure_order_.empty(); }
  bool all_succeeded() const;
  /// Some worker runs and was not asked to stop (the stall watch has something to watch).
  bool any_watched() const;
  int running() const;

  /// The running workers, whose stacks are to be taken, each marked stopping first (taking
  /// a stack may end it); `keep_running`'s capture must not end it (its timer's signal will).
  std::vector<StackTarget> stack_targets(pid_t keep_running = 0);

  // Stopping: each worker's whole process group, through `launcher`.
  /// No worker runs and every worker's process group is empty.
  bool all_stopped(const process::Launcher& launcher) const;
  /// Sends `sig` to each group that still has members, logging it as torchrun does (for
  /// SIGKILL, naming `asked_with`, the signal the stop began with); marks them stopping.
  void signal(process::Launcher& launcher, int sig, int asked_with);
  /// After a stop: the launcher forgets each empty group (the guardian must not kill a reused
  /// id later); the workers still alive, which even SIGKILL did not end, are returned.
  std::vector<StuckWorker> after_stop(process::Launcher& launcher) const;

  /// The first failure seen; nullptr when none.
  const WorkerRecord* first_failure() const;
  /// "rank 1 failed (exitcode: 3)" for the first failure; "failure" when none.
  std::string failure_reason() const;
  /// Every failure in the order seen; with none and a `stall_reason`, the first worker that
  /// had not finished stands for the stall.
  std::vector<WorkerFailure> failures(const WorkerIo& io, const std::string& stall_reason) const;

 private:
  std::vector<WorkerRecord> workers_;
  std::vector<std::size_t> failure_order_;  ///< indices of failed workers, in observed order
};

/// "rank 1: exitcode 1: ValueError: bad value": the rank, how it ended and its last error line
/// (from its error file, else its stderr as `io` kept it).
std::string failure_signature(const WorkerRecord& w, const WorkerIo& io);

}  // namespace ddprun::agent
