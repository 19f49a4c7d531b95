// The rendered man page and completion scripts, fed to the real tools: groff must format the
// page without a warning, bash must complete flags, enum values, subcommands and files from the
// generated script, and zsh must parse its script and offer what each position takes.
#include "ddprun/agent/worker_env.hpp"
#include "ddprun/cli/docs.hpp"
#include "ddprun/status/command.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/subprocess.hpp"

namespace ddprun::cli {
namespace {

std::string write_temp(const std::string& dir, const std::string& name, const std::string& text) {
  auto path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(ManPageTool, GroffFormatsItWithoutWarnings) {
  if (!std::filesystem::exists("/usr/bin/groff")) {
    GTEST_SKIP() << "groff is not installed (package groff-base)";
  }
  auto dir = test::make_temp_dir("ddprun-man");
  auto page =
      write_temp(dir, "ddprun.1", render_man_page("0.0.0", ddprun::agent::worker_variables()));
  auto r = test::run({"/usr/bin/groff", "-man", "-Tutf8", "-ww", "-z", page});
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

// Completes the last word of `words` with the generated bash script, one candidate a line.
std::vector<std::string> complete(const std::vector<std::string>& words) {
  auto dir = test::make_temp_dir("ddprun-bash");
  auto script = write_temp(dir, "ddprun.bash", render_bash_completion(status::status_options()));
  write_temp(dir, "train.py", "");
  std::string array;
  for (const auto& w : words) {
    array += " '" + w + "'";
  }
  auto command = "source " + script + " && COMP_WORDS=(" + array +
                 ") && COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )) && _ddprun && "
                 "(( ${#COMPREPLY[@]} == 0 )) || printf '%s\\n' \"${COMPREPLY[@]}\"";
  test::RunOptions options;
  options.cwd = dir;
  auto r = test::run({"/bin/bash", "--norc", "-c", command}, options);
  EXPECT_EQ(r.status, 0) << r.err;
  std::filesystem::remove_all(dir);
  std::vector<std::string> lines;
  for (std::size_t pos = 0, end = 0; pos < r.out.size(); pos = end + 1) {
    end = std::min(r.out.find('\n', pos), r.out.size());
    lines.push_back(r.out.substr(pos, end - pos));
  }
  return lines;
}

using Words = std::vector<std::string>;

TEST(BashCompletionTool, CompletesAFlagPrefix) {
  EXPECT_EQ(complete({"ddprun", "--numa-b"}), Words{"--numa-binding"});
}

TEST(BashCompletionTool, OffersTheChoicesOfAnEnumFlagInBothForms) {
  EXPECT_EQ(complete({"ddprun", "--numa_binding", ""}),
            (Words{"node", "socket", "exclusive", "core-complex"}));
  EXPECT_EQ(complete({"ddprun", "--numa-binding", "=", "so"}), Words{"socket"});
}

TEST(BashCompletionTool, OffersSubcommandsAndFilesWhereTheScriptGoes) {
  EXPECT_EQ(complete({"ddprun", "--nproc-per-node", "2", "st"}), (Words{"store", "status"}));
  EXPECT_EQ(complete({"ddprun", "--nnodes", "1", "tr"}), Words{"train.py"});
}

TEST(BashCompletionTool, CompletesStoreVerbsAndTheirOptions) {
  EXPECT_EQ(complete({"ddprun", "store", ""}),
            (Words{"serve", "get", "set", "add", "del", "keys"}));
  EXPECT_EQ(complete({"ddprun", "store", "get", "k", "--end"}), Words{"--endpoint"});
}

TEST(BashCompletionTool, CompletesStatusOptions) {
  EXPECT_EQ(complete({"ddprun", "status", "--rdzv-e"}), Words{"--rdzv-endpoint"});
  EXPECT_EQ(complete({"ddprun", "status", "--rdzv-endpoint", "h:1", "--j"}), Words{"--json"});
  EXPECT_EQ(complete({"ddprun", "status", "x"}), Words{});
}

TEST(BashCompletionTool, OffersNoFilesForAFreeTextValue) {
  EXPECT_EQ(complete({"ddprun", "--nnodes", ""}), Words{});
  EXPECT_EQ(complete({"ddprun", "--events-file", "tr"}), Words{"train.py"});
}

TEST(BashCompletionTool, LeavesTheScriptsArgumentsAlone) {
  EXPECT_EQ(complete({"ddprun", "train.py", "--numa"}), Words{});
}

std::string zsh_path() {
  return std::filesystem::exists("/usr/bin/zsh") ? "/usr/bin/zsh" : "/bin/zsh";
}

// Runs the generated zsh function outside the completion system, with stubs that print what
// they are asked to offer, one word a line: _arguments prints its specs (after zsh's quoting
// and brace expansion) behind "spec:" and sets `state` as its '1: :->first' or '*:: :->rest'
// spec would; compadd, _alternative and _files print their candidates. `words` and `current`
// are what _arguments leaves for the state: the words from the subcommand on.
Words zsh_offers(const std::string& state, const Words& words, int current) {
  auto dir = test::make_temp_dir("ddprun-zsh");
  auto script = write_temp(dir, "_ddprun", render_zsh_completion(status::status_options()));
  std::string array;
  for (const auto& w : words) {
    array += " '" + w + "'";
  }
  auto command =
      "_arguments() { local a; for a in \"$@\"; do print -r -- \"spec:$a\"; done; state=" + state +
      "; return 0 }\n"
      "compadd() { [[ $1 == -- ]] && shift; print -rl -- \"$@\" }\n"
      "_alternative() { print -rl -- \"$@\" }\n"
      "_files() { print -r -- FILES }\n"
      "eval \"_ddprun() { $(<" +
      script + ") }\"\nwords=(" + array + "); CURRENT=" + std::to_string(current) + "; _ddprun";
  auto r = test::run({zsh_path(), "-f", "-c", command});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::filesystem::remove_all(dir);
  Words lines;
  for (std::size_t pos = 0, end = 0; pos < r.out.size(); pos = end + 1) {
    end = std::min(r.out.find('\n', pos), r.out.size());
    lines.push_back(r.out.substr(pos, end - pos));
  }
  return lines;
}

/// The lines of `lines` that start with `prefix`, without it.
Words with_prefix(const Words& lines, const std::string& prefix) {
  Words out;
  for (const auto& l : lines) {
    if (l.starts_with(prefix)) {
      out.push_back(l.substr(prefix.size()));
    }
  }
  return out;
}

TEST(ZshCompletionTool, HandsEveryFlagSpellingToArguments) {
  if (!std::filesystem::exists(zsh_path())) {
    GTEST_SKIP() << "zsh is not installed";
  }
  const auto specs = with_prefix(zsh_offers("", {"ddprun"}, 1), "spec:");
  auto has = [&](const std::string& spec) {
    return std::find(specs.begin(), specs.end(), spec) != specs.end();
  };
  EXPECT_TRUE(
      has("(--launcher)--launcher=[Run once in a multi-node PBS or Slurm job script and "
          "start ddprun on every node through pbsdsh, srun or ssh; auto picks pbsdsh "
          "under PBS and srun under Slurm, none never fans out]:HOW:(auto pbsdsh srun ssh "
          "none)"));
  auto spelled = [&](const std::string& start) {
    return std::count_if(specs.begin(), specs.end(),
                         [&](const std::string& s) { return s.find(start) != std::string::npos; });
  };
  EXPECT_EQ(spelled(")--nproc-per-node=["), 1);  // one spec per spelling, brace-expanded
  EXPECT_EQ(spelled(")--nproc_per_node=["), 1);
  EXPECT_EQ(spelled(")--print-config["), 1);
  EXPECT_EQ(spelled("(- *)-h["), 1);
  EXPECT_TRUE(has("1: :->first"));
  EXPECT_TRUE(has("*:: :->rest"));
}

TEST(ZshCompletionTool, OffersWhatEachPositionTakes) {
  if (!std::filesystem::exists(zsh_path())) {
    GTEST_SKIP() << "zsh is not installed";
  }
  auto offers = [](const std::string& state, const Words& words, int current) {
    auto lines = zsh_offers(state, words, current);
    std::erase_if(lines, [](const std::string& l) { return l.starts_with("spec:"); });
    return lines;
  };
  EXPECT_EQ(offers("first", {"st"}, 1),
            (Words{"subcommands:subcommand:(store status)", "files:training script:_files"}));
  EXPECT_EQ(offers("rest", {"store", ""}, 2), (Words{"serve", "get", "set", "add", "del", "keys"}));
  const auto store_options = offers("rest", {"store", "get", "k", "--t"}, 4);
  EXPECT_NE(std::find(store_options.begin(), store_options.end(), "--token-file"),
            store_options.end());
  EXPECT_EQ(store_options.back(), "--help");
  EXPECT_EQ(
      offers("rest", {"status", "--"}, 2),
      (Words{"--rdzv-backend", "--rdzv_backend", "--rdzv-endpoint", "--rdzv_endpoint", "--rdzv-id",
             "--rdzv_id", "--rdzv-conf", "--rdzv_conf", "--timeout", "--json", "--help"}));
  EXPECT_EQ(offers("rest", {"train.py", "--lr"}, 2), Words{"FILES"});
}

TEST(ZshCompletionTool, ParsesAsZsh) {
  const std::string zsh = zsh_path();
  if (!std::filesystem::exists(zsh)) {
    GTEST_SKIP() << "zsh is not installed";
  }
  auto dir = test::make_temp_dir("ddprun-zsh");
  auto script = write_temp(dir, "_ddprun", render_zsh_completion(status::status_options()));
  auto r = test::run({zsh, "-n", script});
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.status, 0) << r.err;
}

}  // namespace
}  // namespace ddprun::cli
