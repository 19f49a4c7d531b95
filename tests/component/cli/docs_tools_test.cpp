// The rendered man page and completion scripts, fed to the real tools: groff must format the
// page without a warning, and bash must complete flags, enum values, subcommands and files
// from the generated script.
#include "ddprun/cli/docs.hpp"

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
  auto page = write_temp(dir, "ddprun.1", render_man_page("0.0.0"));
  auto r = test::run({"/usr/bin/groff", "-man", "-Tutf8", "-ww", "-z", page});
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

// Completes the last word of `words` with the generated bash script, one candidate a line.
std::vector<std::string> complete(const std::vector<std::string>& words) {
  auto dir = test::make_temp_dir("ddprun-bash");
  auto script = write_temp(dir, "ddprun.bash", render_bash_completion());
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

TEST(BashCompletionTool, OffersNoFilesForAFreeTextValue) {
  EXPECT_EQ(complete({"ddprun", "--nnodes", ""}), Words{});
  EXPECT_EQ(complete({"ddprun", "--events-file", "tr"}), Words{"train.py"});
}

TEST(BashCompletionTool, LeavesTheScriptsArgumentsAlone) {
  EXPECT_EQ(complete({"ddprun", "train.py", "--numa"}), Words{});
}

TEST(ZshCompletionTool, ParsesAsZsh) {
  if (!std::filesystem::exists("/usr/bin/zsh") && !std::filesystem::exists("/bin/zsh")) {
    GTEST_SKIP() << "zsh is not installed";
  }
  auto dir = test::make_temp_dir("ddprun-zsh");
  auto script = write_temp(dir, "_ddprun", render_zsh_completion());
  auto r = test::run({"zsh", "-n", script});
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.status, 0) << r.err;
}

}  // namespace
}  // namespace ddprun::cli
