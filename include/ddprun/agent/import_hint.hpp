#pragma once
// The hint after a Python worker failed early because a module could not be imported (the
// wrong python3 first on PATH is the usual cause): which interpreter ran, why ddprun chose it,
// how to choose another.

#include "ddprun/config/launch_config.hpp"
#include "ddprun/errors/failure_lines.hpp"
#include "ddprun/util/env.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace ddprun::agent {

/// A failure this soon after the workers started can be an import failure even when no stderr
/// was seen (the workers write to the agent's own terminal): then the interpreter is asked.
inline constexpr std::chrono::seconds k_early_failure{60};

/// What the hint needs of the failed attempt.
struct EarlyFailure {
  std::vector<errors::ProcessFailure> failures;
  std::chrono::seconds lived{0};  ///< from the workers' start to the root cause's exit
};

/// The workers' interpreter: the configured path, its --print-config origin, the file PATH
/// (from `env`) gives a bare name, and the other python3 found on PATH.
errors::Interpreter describe_interpreter(const config::WorkerCommand& cfg, const util::Env& env);

/// Whether `python` finds `module` (importlib.util.find_spec, which imports nothing but the
/// parent packages), asked within `bound`; nullopt when the interpreter could not tell.
std::optional<bool> finds_module(const std::string& python, const std::string& module,
                                 std::chrono::milliseconds bound);

/// The hint's lines, or none: Python workers only; the evidence is an ImportError in a
/// failure's stderr tail or traceback, else (an exit code 1 within k_early_failure, with no
/// error file) an interpreter that does not find torch.
std::vector<std::string> import_hint(const config::WorkerCommand& cfg, const util::Env& env,
                                     const EarlyFailure& attempt);

}  // namespace ddprun::agent
