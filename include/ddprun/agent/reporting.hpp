#pragma once
// What the user and tools learn about a run: the failure summary (stderr), the agent's own
// TORCHELASTIC_ERROR_FILE, and the --events-file stream.

#include "ddprun/agent/stack_capture.hpp"
#include "ddprun/agent/supervisor.hpp"
#include "ddprun/errors/event_log.hpp"
#include "ddprun/errors/failure.hpp"
#include "ddprun/errors/oom.hpp"
#include "ddprun/rdzv/spares.hpp"
#include "ddprun/rdzv/state.hpp"
#include "ddprun/util/clock.hpp"

#include <memory>
#include <optional>

namespace ddprun::agent {

class Reporter {
 public:
  /// Opens the events file when configured; an unusable path throws Fatal. `clock` stamps the
  /// events and attempts, and must outlive the reporter, as must `command` (the workers, named
  /// in the summary and the import hint).
  Reporter(const config::WorkerCommand& command, const config::OutputPlan& output,
           const util::Env& env, const util::Clock& clock);

  SupervisorHooks hooks();
  /// Stacks taken before a group was stopped: an event now (`stall` for a stall, else
  /// `stacks`), a part of the failure summary and the agent's error file later.
  void on_stacks(const StackReport& report);
  /// A node was left out of the job (this one, `self`, or another): an `excluded` event.
  void on_exclusion(const rdzv::Exclusion& e, bool self);
  void on_spare_joined(const rdzv::SpareJoined& s);
  /// The final event ("result") once the supervisor returned `exit_code`.
  void finish(int exit_code);

 private:
  std::vector<errors::ProcessFailure> failures_of(const std::vector<WorkerFailure>& failed) const;
  /// torchrun's "failed (exitcode: ...)" line and ddprun's "rank R (...) on HOST: how" line.
  void log_failure(const std::vector<errors::ProcessFailure>& failures);
  void on_failed(const std::vector<WorkerFailure>& failures);
  void print_import_hint(const std::vector<WorkerFailure>& failed,
                         const std::vector<errors::ProcessFailure>& failures);
  void write_parent_error_file(const errors::ProcessFailure& root);

  const config::WorkerCommand& cfg_;
  util::Env env_;  ///< the agent's: PATH for the import hint
  std::optional<std::string> parent_error_file_;
  const util::Clock& clock_;
  std::optional<errors::EventLog> events_;
  bool gave_up_ = false;  ///< the job stopped in a crash loop
  errors::OomCounters oom_baseline_;
  int attempt_ = 0;
  std::chrono::system_clock::time_point started_;  ///< when this attempt's workers started
  std::string stacks_;  ///< the last stack report's lines; empty when none was taken
};

}  // namespace ddprun::agent
