#pragma once
// One-line accounts of failed workers for the log: what failed, how and where, at every failed
// attempt (the summary box comes only at the end), and the hint for a Python worker that could
// not import a module. Pure: the caller finds the interpreter and the evidence.

#include "ddprun/errors/failure.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::errors {

/// "exit code 3", "killed by SIGSEGV (signal 11)", "killed by signal 40".
std::string describe_exit(int exit_code);

/// "rank 1 (local_rank 1, pid 4242) on node7: exit code 3", the root cause first, then the
/// others ("; also rank 0 (...): killed by SIGTERM (signal 15)"), at most a few named.
/// Requires non-empty failures.
std::string render_failed_ranks(const std::vector<ProcessFailure>& failures, std::string_view host);

/// The module a Python worker could not import, from its stderr or error-file text.
struct MissingModule {
  std::string module;  ///< "torch"; empty when the line names none
  std::string line;    ///< "ModuleNotFoundError: No module named 'torch'"
};

/// The last ModuleNotFoundError/ImportError line of `lines`, or nullopt.
std::optional<MissingModule> find_import_error(const std::vector<std::string>& lines);

/// The workers' interpreter as the user should hear of it.
struct Interpreter {
  std::string path;      ///< as configured: "python3", "/opt/venv/bin/python3"
  std::string origin;    ///< --print-config's origin: "flag --python", "env PYTHON_EXEC", ...
  std::string resolved;  ///< the file PATH gave for a bare name; empty when not found or not bare
  std::vector<std::string> others;  ///< other python3 on PATH, for the "how to choose" line
};

/// Lines (the first short, the rest indented) saying which interpreter ran, why ddprun chose
/// it and how to choose another.
std::vector<std::string> render_import_hint(const Interpreter& python, const MissingModule& m);

}  // namespace ddprun::errors
