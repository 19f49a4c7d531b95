#pragma once
// The bad-input table of bad_input_e2e_test.cpp: one row per option, environment fallback and
// detected scheduler variable, and the stated reasons for the few that accept any text.

#include <map>
#include <string>
#include <vector>

namespace ddprun::test {

/// One launch that must be refused: `setting` (a flag spelling or a variable name) and `value`
/// (quoted) must both appear in the one-line error, and so must `expected`.
struct BadInput {
  std::string setting;
  std::string value;
  std::string expected;
  std::vector<std::string> args;  ///< launcher options (the bad one included, for flags)
  std::map<std::string, std::string> env;
  int status = 2;       ///< usage/config errors are 2; an unusable program path is 1
  bool python = false;  ///< run a Python worker (no --no-python) so that --python is used
};

/// An option's bad value; `env_expected` is the wording when the value comes from its PET_*
/// (or torch) variable, when that differs (booleans read integers there).
struct OptionRow {
  std::string dest;
  std::string value;
  std::string expected;
  std::string env_expected = "";
  std::vector<std::string> context = {};  ///< other options the bad value needs to matter
  int status = 2;
  bool python = false;
};

/// Every option's bad values (by dest).
const std::vector<OptionRow>& option_rows();
/// option_rows() as flags: `--spelling=value` (the first long spelling).
std::vector<BadInput> flag_rows();
/// option_rows() through each option's environment variable, plus the other variables the
/// launcher itself reads (PYTHON_EXEC).
std::vector<BadInput> env_fallback_rows();
/// A valid environment per scheduler, which the scheduler rows spoil one variable at a time.
std::map<std::string, std::map<std::string, std::string>> scheduler_baselines(
    const std::string& nodefile, const std::string& host);
/// A bad value for every variable in env_names.hpp that has one.
std::vector<BadInput> scheduler_rows(const std::string& nodefile, const std::string& host);
/// Options (by dest) and their variables that take any text, with the reason.
const std::map<std::string, std::string>& options_without_bad_values();
/// Detected variables that take any text (or are only tested for presence), with the reason.
const std::map<std::string, std::string>& variables_without_bad_values();

}  // namespace ddprun::test
