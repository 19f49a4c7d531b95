#pragma once
// The launcher's flag table: one declaration per option, in torchrun's spellings, from which
// parse_args, render_help and docs are all derived. The table is data; the argparse emulation
// that walks it lives in src/cli/parse.cpp.

#include "ddprun/cli/args.hpp"
#include "ddprun/cli/flag_keys.hpp"
#include "ddprun/util/env.hpp"
#include "ddprun/util/result.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::cli {

/// How an option consumes argv: `valued` takes one value (`--f v`, `--f=v`, `-fv`),
/// `boolean` is argparse's store_true, `help`/`version` stop parsing like argparse's actions.
enum class FlagKind { valued, boolean, help, version };

/// The --help section an option is listed in (in this order).
enum class FlagGroup { nodes, rendezvous, worker_command, supervision, logs, extras };

/// One option. Every spelling maps to `dest`; short spellings ("-m") come first, then the
/// dash long form, then the underscore form (argparse lists them in that order).
struct FlagSpec {
  FlagKey dest;                               ///< settings key, e.g. flag::k_nproc_per_node
  std::vector<std::string_view> spellings{};  ///< "-r", "--nproc-per-node", "--nproc_per_node"
  FlagKind kind = FlagKind::valued;
  std::string_view default_value{};  ///< text used when neither flag nor env gives one
  std::string_view env_var{};        ///< env fallback ("PET_NNODES", "LOGLEVEL"), "" for none
  std::string_view metavar{};        ///< value placeholder for --help (valued only)
  std::vector<std::string_view> choices{};  ///< allowed values; empty means any text
  FlagGroup group = FlagGroup::extras;
  std::string_view help{};  ///< one sentence for --help
};

/// Every option ddprun accepts (torchrun's, the legacy launcher's and ddprun's own), grouped
/// by FlagGroup. The reference stays valid for the life of the program.
std::span<const FlagSpec> flag_table();

/// The row of flag_table() for `dest` (every key in flag_keys.hpp has one), for code that
/// checks a setting against the row's choices.
const FlagSpec& flag_spec(FlagKey dest);

/// Title of a --help section, e.g. "Rendezvous".
std::string_view group_title(FlagGroup group);

/// parse_args over an arbitrary table (tests use synthetic tables for prefix edge cases).
Result<ParsedArgs> parse_args_with(std::span<const FlagSpec> table,
                                   const std::vector<std::string>& args, const util::Env& env);

/// render_help over an arbitrary table.
std::string render_help_with(std::span<const FlagSpec> table);

}  // namespace ddprun::cli
