#pragma once
// Parsing the words of a `ddprun NAME ...` subcommand (status, store) with CLI11. Header-only:
// each subcommand's module links CLI11 itself, and util stays free of it.

#include "ddprun/util/exit_status.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace ddprun::util {

/// Parses `words` (a leading `name` is skipped) into `app`. Returns an exit code to return at
/// once: 0 after printing the help, 2 after a one-line usage error on stderr
/// ("ddprun NAME: ..."); nullopt when the command should run.
inline std::optional<int> parse_subcommand(CLI::App& app, const std::string& name,
                                           std::vector<std::string> words) {
  if (!words.empty() && words.front() == name) {
    words.erase(words.begin());
  }
  std::reverse(words.begin(), words.end());  // CLI11 consumes a reversed vector
  try {
    app.parse(words);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return k_exit_success;
  } catch (const CLI::ParseError& e) {
    std::cerr << "ddprun " << name << ": " << e.what() << "\n";
    return k_exit_usage;
  }
  return std::nullopt;
}

}  // namespace ddprun::util
