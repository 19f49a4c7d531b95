// The `ddprun store` and `ddprun status` flags that doc_text.hpp lists for the help, man page
// and completions, against the subcommands' own CLI11 definitions, read from their --help: a
// flag added to, renamed in or dropped from either side fails here.
#include "ddprun/status/command.hpp"
#include "ddprun/store/command.hpp"
#include "ddprun/util/strings.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "doc_text.hpp"

namespace ddprun::cli::detail {
namespace {

using Command = int (*)(const std::vector<std::string>&, const util::Env&);
using Names = std::set<std::string, std::less<>>;

/// What `command(words)` prints on stdout; it must exit 0.
std::string help_of(Command command, const std::vector<std::string>& words) {
  std::ostringstream out;
  auto* old = std::cout.rdbuf(out.rdbuf());
  const int status = command(words, util::Env{});
  std::cout.rdbuf(old);
  EXPECT_EQ(status, 0) << out.str();
  return out.str();
}

/// The long spellings of a CLI11 help's options: the first column of its lines that start
/// with '-' ("-h,--help", "--rdzv-id,--rdzv_id TEXT=none").
Names options_in_help(const std::string& help) {
  Names out;
  std::istringstream in(help);
  for (std::string line; std::getline(in, line);) {
    const auto text = util::trim(line);
    if (!text.starts_with('-')) {
      continue;
    }
    for (const auto& spelling : util::split(text.substr(0, text.find(' ')), ',')) {
      if (spelling.starts_with("--")) {
        out.emplace(spelling);
      }
    }
  }
  return out;
}

/// The names a CLI11 help lists under "Subcommands:", one a line up to the next blank line.
Names subcommands_in_help(const std::string& help) {
  Names out;
  std::istringstream in(help);
  std::string line;
  while (std::getline(in, line) && line != "Subcommands:") {
  }
  while (std::getline(in, line) && !util::trim(line).empty()) {
    const auto text = util::trim(line);
    out.emplace(text.substr(0, text.find(' ')));
  }
  return out;
}

/// The options a usage line names ("KEY [--endpoint HOST:PORT] [--timeout SECONDS]").
Names options_in_usage(std::string_view usage) {
  static const std::regex k_option(R"(--[a-z][a-z_-]*)");
  const std::string text(usage);
  Names out;
  for (std::sregex_iterator it(text.begin(), text.end(), k_option), end; it != end; ++it) {
    out.insert(it->str());
  }
  return out;
}

TEST(SubcommandDocs, EachStoreVerbListsTheOptionsItTakes) {
  for (const auto& verb : k_store_verbs) {
    auto actual =
        options_in_help(help_of(store::store_command, {std::string(verb.name), "--help"}));
    EXPECT_EQ(actual.erase("--help"), 1U) << verb.name;
    EXPECT_EQ(actual, options_in_usage(verb.arguments)) << verb.name;
  }
}

TEST(SubcommandDocs, StoreOptionsAreTheVerbsOptions) {
  Names all;
  for (const auto& verb : k_store_verbs) {
    all.merge(options_in_help(help_of(store::store_command, {std::string(verb.name), "--help"})));
  }
  all.erase("--help");
  EXPECT_EQ(Names(k_store_options.begin(), k_store_options.end()), all);
}

TEST(SubcommandDocs, StoreVerbsAreTheSubcommands) {
  Names verbs;
  for (const auto& verb : k_store_verbs) {
    verbs.emplace(verb.name);
  }
  EXPECT_EQ(verbs, subcommands_in_help(help_of(store::store_command, {"--help"})));
}

TEST(SubcommandDocs, StatusOptionsAreTheCommandsOptions) {
  const auto listed = status::status_options();
  EXPECT_EQ(Names(listed.begin(), listed.end()),
            options_in_help(help_of(status::status_command, {"--help"})));
  EXPECT_EQ(std::count(listed.begin(), listed.end(), "--rdzv_backend"), 1)
      << "the launcher's spellings come with the shared flags";
}

}  // namespace
}  // namespace ddprun::cli::detail
