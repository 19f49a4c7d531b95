#pragma once
// Worker failures and the torchrun-compatible summary box (spec torchrun.md §6.2-§6.3).
// Everything here is pure: reading error files and counters is the caller's job.

#include "ddprun/util/result.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::errors {

/// torchrun's text for "no file, no signal" (spec §6.2).
inline constexpr std::string_view k_no_traceback_message =
    "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html";
/// Shown for a missing error file or an unknown signal name.
inline constexpr std::string_view k_not_available = "<N/A>";
/// Summary width cap (spec §6.3).
inline constexpr std::size_t k_max_summary_width = 60;

/// A parsed worker error file (spec §6.1, both shapes).
struct ErrorRecord {
  /// Text for the "traceback :" line before indentation: py_callstack, else the inner
  /// message, else "<N/A>" (dict shape); the string itself (new shape).
  std::string traceback;
  bool message_is_dict = false;           ///< old `{"message": {...}}` shape
  std::optional<std::int64_t> timestamp;  ///< epoch seconds, absent when missing or not a number
  std::string raw_json;                   ///< the file as read, for the parent error file
};

/// Parses an error file's text. Garbage, truncation, a non-object or a missing "message"
/// field come back as ErrorCode::protocol with a one-line reason.
Result<ErrorRecord> parse_error_file(std::string_view json);

/// "SIGSEGV" for 11; "" for numbers Python's signal.Signals does not name.
std::string signal_name(int signal_number);

/// One failed worker as the summary shows it.
struct ProcessFailure {
  int local_rank = 0;
  int rank = 0;
  int pid = 0;
  int exit_code = 0;            ///< negative = killed by signal -exit_code
  std::string error_file;       ///< path; empty renders as <N/A> (no file was written)
  std::int64_t timestamp = 0;   ///< epoch seconds (from the error file, else detection time)
  std::string message;          ///< the "traceback :" text, already indented as torchrun does
  std::string error_file_note;  ///< why an existing error file was not used; empty if fine
  std::vector<std::string> stderr_tail;  ///< last stderr lines, kept only without a record
  bool oom_hint = false;                 ///< SIGKILL while the kernel's OOM-kill counter rose
  std::string record_json;               ///< the valid error file's text; empty without one
  std::string reason;  ///< the agent's cause (watchdog), shown when a record gave the message
};

/// What the agent knows about one failed worker when it builds the failure.
struct FailureInput {
  int local_rank = 0;
  int rank = 0;
  int pid = 0;
  int exit_code = 0;
  std::string error_file;                     ///< path given to the worker, may be empty
  std::optional<Result<ErrorRecord>> record;  ///< nullopt: no file on disk
  std::int64_t now = 0;                       ///< epoch seconds at detection
  std::vector<std::string> stderr_tail;
  bool oom_hint = false;
  std::string reason;  ///< why the agent ended it, e.g. `watchdog timer "step" expired`
};

/// Builds the failure the way torchrun's ProcessFailure does (spec §6.2); an unreadable
/// file keeps its path, falls back to the generated message and records why in the note.
/// A `reason` ends the generated message ("Signal 9 (SIGKILL) received by PID 42: watchdog
/// timer "step" expired"), so the parent error file carries it too; after a message from the
/// worker's own record it gets a "reason" line instead.
ProcessFailure make_failure(FailureInput input);

/// Index of the root cause: smallest timestamp, ties to the earliest. Requires non-empty.
std::size_t root_cause_index(const std::vector<ProcessFailure>& failures);

/// Formats epoch seconds as local time "YYYY-MM-DD_HH:MM:SS" (Python isoformat(sep="_")).
using TimeFormatter = std::function<std::string(std::int64_t)>;
std::string format_local_time(std::int64_t epoch_seconds);

/// The ChildFailedError box of spec §6.3 (recent-main style exitcode line), byte for byte,
/// starting with the empty line. ddprun's additions (note, hint, stderr) follow the torchrun
/// lines inside each block and do not count towards the width. Requires non-empty failures.
std::string render_summary(std::string_view name, std::string_view host,
                           const std::vector<ProcessFailure>& failures,
                           const TimeFormatter& format_time = format_local_time);

}  // namespace ddprun::errors
