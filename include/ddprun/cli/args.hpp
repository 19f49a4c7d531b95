#pragma once
// The launcher's command line as parsed text: every setting is kept as the string the user
// gave, with where it came from. Conversion and validation happen in config::resolve, so the
// parser stays a table walk and --print-config can name each value's origin.

#include "ddprun/cli/flag_keys.hpp"
#include "ddprun/util/env.hpp"
#include "ddprun/util/result.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ddprun::cli {

/// Where a setting's text came from.
enum class Origin { default_value, env, flag, scheduler };

struct Setting {
  std::string value;  ///< text as given ("1" for a boolean flag that is on)
  Origin origin = Origin::default_value;
  std::string source;  ///< "--nproc-per-node", "PET_NPROC_PER_NODE", "default" or, for a
                       ///< value from a scheduler, "slurm: SLURM_STEP_NUM_NODES"
};

/// Result of parsing argv. `settings` holds every option of the flag table keyed by its
/// FlagKey (its destination name, the underscore spelling without dashes, e.g.
/// flag::k_nproc_per_node), each filled from the flag, else from PET_<DEST>, else from the
/// table's default.
struct ParsedArgs {
  std::map<FlagKey, Setting> settings;
  std::optional<std::string> training_script;     ///< first positional (absent with --help)
  std::vector<std::string> training_script_args;  ///< everything after it, untouched
  bool help = false;
  bool version = false;

  const Setting& at(FlagKey dest) const { return settings.at(dest); }
  bool flag_on(FlagKey dest) const { return settings.at(dest).value == "1"; }
};

/// Parses the launcher's argv (argv[0] excluded). Usage errors (unknown or ambiguous flag,
/// missing value, missing script) come back as ErrorCode::usage with one line naming the
/// flag and what was expected.
Result<ParsedArgs> parse_args(const std::vector<std::string>& args, const util::Env& env);

/// The complete, grouped --help text.
std::string render_help();

}  // namespace ddprun::cli
