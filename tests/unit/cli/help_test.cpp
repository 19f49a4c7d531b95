// render_help(): complete (every spelling, metavar, default and env of the table), grouped in
// the documented order, and wrapped at 100 columns.
#include "ddprun/cli/args.hpp"
#include "ddprun/cli/flags.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace ddprun::cli {
namespace {

// Keys of synthetic tables, made once: clang 14 crashes (ConstantEmitter) on a consteval
// FlagKey constructor called inside an aggregate initializer.
constexpr FlagKey k_test_key_x{"x"};
constexpr FlagKey k_test_key_y{"y"};

TEST(RenderHelp, StartsWithUsageAndPositionals) {
  auto help = render_help();
  EXPECT_EQ(
      help.rfind("usage: ddprun [-h] [options] training_script [training_script_args ...]\n", 0),
      0U);
  EXPECT_NE(help.find("\npositional arguments:\n  training_script "), std::string::npos);
  EXPECT_NE(help.find("\n  training_script_args  "), std::string::npos);
  EXPECT_NE(help.find("PET_"), std::string::npos);
}

TEST(RenderHelp, EveryTableEntryAppearsWithSpellingsMetavarDefaultAndEnv) {
  auto help = render_help();
  for (const auto& flag : flag_table()) {
    std::string spellings;
    for (auto s : flag.spellings) {
      spellings += spellings.empty() ? "" : ", ";
      spellings += s;
    }
    EXPECT_NE(help.find("  " + spellings), std::string::npos) << spellings;
    if (flag.kind == FlagKind::valued) {
      EXPECT_NE(help.find(spellings + " "), std::string::npos) << spellings;
      if (flag.choices.empty()) {
        EXPECT_NE(help.find(spellings + " " + std::string(flag.metavar)), std::string::npos);
      }
      if (!flag.default_value.empty()) {
        EXPECT_NE(help.find("default: " + std::string(flag.default_value)), std::string::npos)
            << flag.dest.name();
      }
    }
    if (!flag.env_var.empty()) {
      EXPECT_NE(help.find("env " + std::string(flag.env_var)), std::string::npos)
          << flag.dest.name();
    }
  }
}

TEST(RenderHelp, ChoicesAreShownLikeArgparse) {
  auto help = render_help();
  EXPECT_NE(help.find("--start-method, --start_method {spawn,fork,forkserver}"), std::string::npos);
  EXPECT_NE(help.find("--agent-store, --agent_store {auto,on,off}"), std::string::npos);
}

TEST(RenderHelp, AgentStoreOffIsDocumentedAsTheOldBehaviour) {
  auto help = render_help();
  EXPECT_NE(help.find("1.13 behaviour"), std::string::npos);
  EXPECT_NE(help.find("(worker rank 0 hosts"), std::string::npos);
}

TEST(RenderHelp, GroupsAppearInOrder) {
  auto help = render_help();
  std::size_t last = 0;
  for (const auto* title :
       {"\nNodes and workers:\n", "\nRendezvous:\n", "\nWorker command:\n",
        "\nRestarts and supervision:\n", "\nLogs and output:\n", "\nddprun extras:\n"}) {
    auto at = help.find(title);
    ASSERT_NE(at, std::string::npos) << title;
    EXPECT_GT(at, last) << title;
    last = at;
  }
}

TEST(RenderHelp, NoLineIsWiderThanOneHundredColumns) {
  std::istringstream lines(render_help());
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    EXPECT_LE(line.size(), 100U) << line;
    EXPECT_TRUE(line.empty() || line.back() != ' ') << "trailing space: " << line;
    ++count;
  }
  EXPECT_GT(count, 50);
}

TEST(RenderHelp, LongInvocationPutsHelpOnTheNextLine) {
  std::vector<FlagSpec> table = {
      {k_test_key_x,
       {"--a-very-long-option-name"},
       FlagKind::valued,
       "",
       "",
       "VALUE",
       {},
       FlagGroup::nodes,
       "Does a thing."},
      {k_test_key_y,
       {"--short"},
       FlagKind::boolean,
       "0",
       "",
       "",
       {},
       FlagGroup::nodes,
       "Short one."},
  };
  auto help = render_help_with(table);
  EXPECT_NE(help.find("\n  --a-very-long-option-name VALUE\n"
                      "                        Does a thing. (default: empty)\n"),
            std::string::npos)
      << help;
  EXPECT_NE(help.find("\n  --short               Short one. (default: off)\n"), std::string::npos)
      << help;
}

}  // namespace
}  // namespace ddprun::cli
