#pragma once
// Text -> value parsers used across modules. Each returns Result with a message that names
// the offending text and what was expected.

#include "ddprun/util/result.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::util {

std::string_view trim(std::string_view s);
std::vector<std::string> split(std::string_view s, char sep);
bool starts_with(std::string_view s, std::string_view prefix);
std::string to_lower(std::string_view s);

/// Decimal integer with optional sign, the whole text (after trimming) must be consumed.
Result<std::int64_t> parse_int(std::string_view text);
/// parse_int restricted to [lo, hi].
Result<std::int64_t> parse_int_in(std::string_view text, std::int64_t lo, std::int64_t hi);
/// Python float() subset: decimal with optional fraction/exponent.
Result<double> parse_double(std::string_view text);
/// Seconds as a float ("0.1", "30") to a duration.
Result<std::chrono::milliseconds> parse_seconds(std::string_view text);
/// torchrun's bool words: 1,true,t,yes,y / 0,false,f,no,n (case-insensitive).
Result<bool> parse_bool_word(std::string_view text);

/// Python string.Template.safe_substitute for one variable: replaces ${name} and $name,
/// collapses $$ to $, leaves every other $ untouched.
std::string substitute_var(std::string_view text, std::string_view name, std::string_view value);

/// Quote a string for messages: 'abc' (single quotes, like Python's repr of a plain str), with
/// control characters escaped ('a\nb', '\x00') so that the message stays on one line.
std::string quoted(std::string_view s);

/// Integers as sorted, de-duplicated ranges: {7, 0, 2, 3, 4} -> "0,2-4,7".
std::string render_ranges(std::vector<int> values);

}  // namespace ddprun::util
