#pragma once
// Module-private: argparse's option recognition (_parse_optional) over a flag table.
// Pure functions; parse.cpp drives them token by token.

#include "ddprun/cli/flags.hpp"
#include "ddprun/util/result.hpp"

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ddprun::cli::detail {

/// An argv token recognised as one option.
struct OptionMatch {
  const FlagSpec* flag = nullptr;
  std::string spelling;                 ///< the table spelling, never the typed abbreviation
  std::optional<std::string> attached;  ///< value after '=' or glued to a short option
  bool glued_short = false;             ///< attached came from "-r3" (not from "=")
};

/// argparse's negative-number pattern (^-\d+$ or ^-\d*\.\d+$); such tokens are positional.
bool is_negative_number(std::string_view token);

/// True for tokens argparse would try as an option: a dash, more text, not a negative number.
bool looks_like_option(std::string_view token);

/// Recognises `token` as an option of `table`: exact spelling, `--name=value`, a unique prefix
/// of a long spelling (exact spellings win), or a short option with glued text (`-r3`).
/// nullopt when nothing matches; a usage error when a prefix matches several options.
Result<std::optional<OptionMatch>> find_option(std::span<const FlagSpec> table,
                                               std::string_view token);

/// Whether `token` may be consumed as an option's value (argparse's 'A' class).
bool is_value_token(std::span<const FlagSpec> table, std::string_view token);

/// Parses text with Python int() rules (surrounding spaces, sign, single '_' between digits)
/// and reports whether it is non-zero; nullopt when it is not an integer.
std::optional<bool> parse_python_int_nonzero(std::string_view text);

}  // namespace ddprun::cli::detail
