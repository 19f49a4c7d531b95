#pragma once
// torchrun's log directory layout (spec torchrun.md §7.2), as pure path arithmetic:
//   <log_dir | $TMPDIR/torchelastic_XXXXXXXX>/<run_id>_XXXXXXXX/attempt_<n>/<local_rank>/
//       stdout.log  stderr.log  error.json
// Creating the directories is log_dir.hpp's job (ddprun_output).

#include "ddprun/util/env.hpp"

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

/// Where temporary directories go, as Python's tempfile chooses for torchrun: $TMPDIR when set
/// and not empty, else /tmp.
std::string temp_root(const util::Env& env);

/// "<run_dir>/attempt_<attempt>".
std::string attempt_dir(std::string_view run_dir, int attempt);
/// The paths for one worker; all empty when run_dir is empty (files disabled).
LogPaths log_paths(std::string_view run_dir, int attempt, int local_rank);

}  // namespace ddprun::output
