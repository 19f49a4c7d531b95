#pragma once
// torchrun's log directory layout (spec torchrun.md §7.2):
//   <log_dir | $TMPDIR/torchelastic_XXXXXXXX>/<run_id>_XXXXXXXX/attempt_<n>/<local_rank>/
//       stdout.log  stderr.log  error.json
// log_paths() is pure; make_run_dir() and prepare_attempt_dir() touch the file system.

#include "ddprun/util/result.hpp"

#include <string>
#include <string_view>

namespace ddprun::output {

/// --log-dir value that disables log files (and TORCHELASTIC_ERROR_FILE), as in torchrun.
inline constexpr std::string_view k_devnull = "/dev/null";

/// One worker's files; every member is empty when log files are disabled.
struct LogPaths {
  std::string dir;  ///< <run_dir>/attempt_<n>/<local_rank>
  std::string stdout_log;
  std::string stderr_log;
  std::string error_file;  ///< the worker's TORCHELASTIC_ERROR_FILE
};

/// "<run_dir>/attempt_<attempt>".
std::string attempt_dir(std::string_view run_dir, int attempt);
/// The paths for one worker; all empty when run_dir is empty (files disabled).
LogPaths log_paths(std::string_view run_dir, int attempt, int local_rank);

/// Creates the run directory once per agent: under log_dir (created if missing; an error if
/// it is a file), or under a fresh $TMPDIR (else /tmp) "torchelastic_XXXXXXXX" when empty.
/// Returns "" for /dev/null (files disabled).
Result<std::string> make_run_dir(std::string_view log_dir, std::string_view run_id);

/// Wipes and re-creates attempt_<attempt> with sub-directories 0..nproc-1 (spec §5.1 step 2).
/// Earlier attempts are left alone. No-op when run_dir is empty.
Result<void> prepare_attempt_dir(std::string_view run_dir, int attempt, int nproc);

}  // namespace ddprun::output
