// render_man_page / render_bash_completion / render_zsh_completion: complete (every spelling of
// the table, every choice of an enum flag), and structured as man(7), bash and zsh expect.
#include "ddprun/cli/docs.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ddprun::cli {
namespace {

// Keys of synthetic tables, made once: clang 14 crashes (ConstantEmitter) on a consteval
// FlagKey constructor called inside an aggregate initializer.
constexpr FlagKey k_test_key_x{"x"};
/// What `ddprun status` takes, as the completions are handed it (status::status_options()).
const std::vector<std::string> k_some_status_options{"--rdzv-endpoint", "--json", "--help"};

// The man page writes '-' as roff's "\-".
std::string roff(std::string_view text) {
  std::string out;
  for (char c : text) {
    out += c == '-' ? std::string("\\-") : std::string(1, c);
  }
  return out;
}

/// What the agent would list (agent::worker_variables(); its own test checks the real list).
constexpr VariableDoc k_workers[] = {{"RANK", "The worker's rank in the job."},
                                     {"OMP_NUM_THREADS", "1 when unset."}};

bool contains(const std::string& text, std::string_view needle) {
  return text.find(needle) != std::string::npos;
}

TEST(RenderManPage, HasEverySection) {
  auto man = render_man_page("9.8.7", k_workers);
  EXPECT_EQ(man.rfind(".TH DDPRUN 1 \"\" \"ddprun 9.8.7\"", 0), 0U);
  for (auto section : {"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "ENVIRONMENT", "EXIT STATUS",
                       "SUBCOMMANDS", "SEE ALSO"}) {
    EXPECT_TRUE(contains(man, std::string("\n.SH ") + section + "\n")) << section;
  }
}

TEST(RenderManPage, ListsEverySpellingMetavarAndChoice) {
  auto man = render_man_page("0", k_workers);
  for (const auto& flag : flag_table()) {
    for (auto s : flag.spellings) {
      EXPECT_TRUE(contains(man, "\\fB" + roff(s) + "\\fR")) << s;
    }
    for (auto c : flag.choices) {
      EXPECT_TRUE(contains(man, roff(c))) << flag.dest.name() << " " << c;
    }
    if (flag.kind == FlagKind::valued && flag.choices.empty()) {
      EXPECT_TRUE(contains(man, "\\fI" + roff(flag.metavar) + "\\fR")) << flag.dest.name();
    }
  }
}

TEST(RenderManPage, GroupsOptionsInHelpOrder) {
  auto man = render_man_page("0", k_workers);
  std::size_t last = 0;
  for (auto group : {FlagGroup::nodes, FlagGroup::rendezvous, FlagGroup::worker_command,
                     FlagGroup::supervision, FlagGroup::logs, FlagGroup::extras}) {
    auto at = man.find("\n.SS " + std::string(group_title(group)) + "\n");
    ASSERT_NE(at, std::string::npos) << group_title(group);
    EXPECT_GT(at, last);
    last = at;
  }
}

TEST(RenderManPage, EnvironmentNamesEveryTableVariableOnce) {
  auto man = render_man_page("0", k_workers);
  auto env = man.substr(man.find("\n.SH ENVIRONMENT\n"));
  for (const auto& flag : flag_table()) {
    if (!flag.env_var.empty()) {
      auto entry = "\n.B " + roff(flag.env_var) + "\n";
      auto first = env.find(entry);
      EXPECT_NE(first, std::string::npos) << flag.env_var;
      EXPECT_EQ(env.find(entry, first + 1), std::string::npos) << flag.env_var;
    }
  }
  EXPECT_TRUE(contains(env, "\n.B PYTHON_EXEC\n"));
}

TEST(RenderManPage, ListsTheWorkersVariablesAfterTheLaunchersOwn) {
  auto man = render_man_page("0", k_workers);
  auto env = man.substr(man.find("\n.SH ENVIRONMENT\n"));
  const auto workers = env.find("Workers get the launcher's own environment and these");
  ASSERT_NE(workers, std::string::npos);
  EXPECT_GT(workers, env.find("\n.B PYTHON_EXEC\n"));
  for (const auto& v : k_workers) {
    EXPECT_NE(env.find("\n.B " + roff(v.name) + "\n" + roff(v.text) + "\n", workers),
              std::string::npos)
        << v.name;
  }
}

TEST(RenderManPage, EscapesBackslashAndLeadingDot) {
  std::vector<FlagSpec> table = {{.dest = k_test_key_x,
                                  .spellings = {"--x"},
                                  .kind = FlagKind::boolean,
                                  .group = FlagGroup::nodes,
                                  .help = ".starts with a dot and has a \\ backslash"}};
  auto man = render_man_page_with(table, "0", k_workers);
  EXPECT_TRUE(contains(man, "\n\\&.starts with a dot and has a \\e backslash"));
  EXPECT_FALSE(contains(man, "\n.starts"));
}

TEST(RenderManPage, NoLineStartsWithAQuoteOrAnUnknownRequest) {
  auto man = render_man_page("0", k_workers);
  std::size_t pos = 0;
  while (pos < man.size()) {
    auto end = man.find('\n', pos);
    auto line = man.substr(pos, end - pos);
    pos = end + 1;
    EXPECT_FALSE(line.starts_with("'")) << line;
    if (line.starts_with(".")) {
      auto request = line.substr(0, line.find(' '));
      EXPECT_TRUE(request == ".TH" || request == ".SH" || request == ".SS" || request == ".TP" ||
                  request == ".PP" || request == ".B" || request == ".BR" || request == ".br" ||
                  request == ".nh")
          << line;
    }
  }
}

TEST(RenderBashCompletion, CompletesEverySpellingAndChoice) {
  auto bash = render_bash_completion(k_some_status_options);
  auto flags_at = bash.find("local flags=\"");
  ASSERT_NE(flags_at, std::string::npos);
  auto flags =
      " " + bash.substr(flags_at + 13, bash.find('"', flags_at + 13) - flags_at - 13) + " ";
  for (const auto& flag : flag_table()) {
    for (auto s : flag.spellings) {
      EXPECT_TRUE(contains(flags, " " + std::string(s) + " ")) << s;
    }
    if (!flag.choices.empty()) {
      std::string words;
      for (auto c : flag.choices) {
        words += (words.empty() ? "" : " ") + std::string(c);
      }
      EXPECT_TRUE(contains(bash, "compgen -W \"" + words + "\"")) << flag.dest.name();
    }
  }
  EXPECT_TRUE(contains(bash, "\ncomplete -F _ddprun ddprun\n"));
}

TEST(RenderBashCompletion, ValuedFlagsAreKnownSoTheirValueIsNotTakenForTheScript) {
  auto bash = render_bash_completion(k_some_status_options);
  auto at = bash.find("local valued=\"");
  ASSERT_NE(at, std::string::npos);
  auto valued = " " + bash.substr(at + 14, bash.find('"', at + 14) - at - 14) + " ";
  for (const auto& flag : flag_table()) {
    for (auto s : flag.spellings) {
      EXPECT_EQ(contains(valued, " " + std::string(s) + " "), flag.kind == FlagKind::valued) << s;
    }
  }
}

TEST(RenderZshCompletion, CompletesEverySpellingWithChoices) {
  auto zsh = render_zsh_completion(k_some_status_options);
  EXPECT_EQ(zsh.rfind("#compdef ddprun\n", 0), 0U);
  for (const auto& flag : flag_table()) {
    for (auto s : flag.spellings) {
      std::string spec(s);
      if (flag.kind == FlagKind::valued) {
        spec += s.starts_with("--") ? "=" : "+";
      }
      EXPECT_TRUE(contains(zsh, spec + ",") || contains(zsh, spec + "}") ||
                  contains(zsh, spec + "["))
          << spec;
    }
    if (!flag.choices.empty()) {
      std::string words;
      for (auto c : flag.choices) {
        words += (words.empty() ? "" : " ") + std::string(c);
      }
      EXPECT_TRUE(contains(zsh, ":(" + words + ")'")) << flag.dest.name();
    }
  }
}

TEST(RenderZshCompletion, QuotesHelpTextForArguments) {
  std::vector<FlagSpec> table = {{.dest = k_test_key_x,
                                  .spellings = {"--x"},
                                  .kind = FlagKind::boolean,
                                  .group = FlagGroup::nodes,
                                  .help = "the workers' [state]: a:b. Second sentence."}};
  auto zsh = render_zsh_completion_with(table, k_some_status_options);
  EXPECT_TRUE(contains(zsh, "  '(--x)--x[the workers'\\'' \\[state\\]\\: a\\:b]' \\\n")) << zsh;
}

}  // namespace
}  // namespace ddprun::cli
