// Bad input, table-driven, through the real binary: a bad value for every option that takes
// one, for every PET_*/torch environment fallback and for every scheduler variable ddprun
// detects. Each must end the launch with exit status 2 (1 for an unusable program path) and
// one line on stderr naming the setting, the value (quoted) and what was expected, before
// anything is spawned: the worker and every fan-out tool on PATH would create a marker file.
// The completeness checks fail when an option or a detected variable has no row and no
// stated reason for having none.
#include "ddprun/cli/flags.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "bad_input_rows.hpp"
#include "support/subprocess.hpp"

namespace ddprun::test {
namespace {

namespace fs = std::filesystem;
using Env = std::map<std::string, std::string>;

std::string this_host() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? name : "localhost";
}

/// A scratch directory with fake fan-out tools on PATH and the marker every spawn would create.
class Sandbox {
 public:
  Sandbox() : dir_(make_temp_dir("ddprun-bad-input-")) {
    fs::create_directories(dir_ + "/bin");
    for (const char* tool : {"srun", "pbsdsh", "ssh", "flux", "mpirun", "jsrun", "blaunch"}) {
      auto path = dir_ + "/bin/" + tool;
      std::ofstream(path) << "#!/bin/sh\ntouch " << marker() << "\n";
      fs::permissions(path, fs::perms::owner_all);
    }
    std::ofstream(nodefile()) << this_host() << "\n";
  }
  ~Sandbox() { fs::remove_all(dir_); }
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  std::string marker() const { return dir_ + "/spawned"; }
  std::string nodefile() const { return dir_ + "/nodefile"; }

  /// ddprun ARGS --no-python /usr/bin/touch MARKER in exactly ENV (plus PATH and HOME).
  RunResult launch(const std::vector<std::string>& args, const Env& env, bool python) const {
    std::vector<std::string> argv{"/usr/bin/env", "-i", "PATH=" + dir_ + "/bin:/usr/bin:/bin",
                                  "HOME=" + dir_};
    for (const auto& [name, value] : env) {
      argv.push_back(name + "=" + value);
    }
    argv.push_back(ddprun_bin());
    argv.insert(argv.end(), args.begin(), args.end());
    if (!python) {
      argv.emplace_back("--no-python");
    }
    argv.emplace_back("/usr/bin/touch");
    argv.push_back(marker());
    return run(argv, RunOptions{{}, {}, dir_, std::chrono::seconds(60)});
  }

 private:
  std::string dir_;
};

std::string quoted(const std::string& s) { return "'" + s + "'"; }

void expect_rejected(const Sandbox& box, const BadInput& row) {
  SCOPED_TRACE(row.setting + "=" + row.value);
  auto r = box.launch(row.args, row.env, row.python);
  EXPECT_EQ(r.status, row.status) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(row.setting), std::string::npos) << "does not name the setting: " << r.err;
  EXPECT_NE(r.err.find(quoted(row.value)), std::string::npos)
      << "does not quote the value: " << r.err;
  EXPECT_NE(r.err.find(row.expected), std::string::npos)
      << "does not say what was expected (" << row.expected << "): " << r.err;
  EXPECT_FALSE(fs::exists(box.marker())) << "something was spawned";
  fs::remove(box.marker());
}

TEST(BadInput, TheBaselinesAreAccepted) {
  Sandbox box;
  for (const auto& [name, env] : scheduler_baselines(box.nodefile(), this_host())) {
    SCOPED_TRACE(name);
    auto r = box.launch({"--print-config"}, env, false);
    EXPECT_EQ(r.status, 0) << r.err;
  }
}

TEST(BadInput, EveryOptionRejectsABadValue) {
  Sandbox box;
  for (const auto& row : flag_rows()) {
    expect_rejected(box, row);
  }
}

TEST(BadInput, EveryEnvironmentFallbackRejectsABadValue) {
  Sandbox box;
  for (const auto& row : env_fallback_rows()) {
    expect_rejected(box, row);
  }
}

TEST(BadInput, EverySchedulerVariableRejectsABadValue) {
  Sandbox box;
  for (const auto& row : scheduler_rows(box.nodefile(), this_host())) {
    expect_rejected(box, row);
  }
}

// --- completeness ---------------------------------------------------------------------------

std::set<std::string> settings_in(const std::vector<BadInput>& rows) {
  std::set<std::string> out;
  for (const auto& row : rows) {
    out.insert(row.setting);
  }
  return out;
}

TEST(BadInput, EveryOptionHasARowOrAReason) {
  const auto rows = settings_in(flag_rows());
  const auto env_rows = settings_in(env_fallback_rows());
  const auto& exempt = options_without_bad_values();
  for (const auto& flag : cli::flag_table()) {
    if (flag.kind == cli::FlagKind::help || flag.kind == cli::FlagKind::version) {
      continue;
    }
    const std::string spelling(flag.spellings.back());
    bool listed = exempt.count(std::string(flag.dest.name())) != 0;
    for (auto s : flag.spellings) {
      listed = listed || rows.count(std::string(s)) != 0;
    }
    EXPECT_TRUE(listed) << spelling << " has no bad-input row and no reason for having none";
    if (!flag.env_var.empty()) {
      EXPECT_TRUE(env_rows.count(std::string(flag.env_var)) != 0 ||
                  exempt.count(std::string(flag.env_var)) != 0)
          << flag.env_var << " (fallback of " << spelling << ") has no bad-input row";
    }
  }
}

// Every variable named in env_names.hpp, read from the header so that a new one fails here.
TEST(BadInput, EveryDetectedVariableHasARowOrAReason) {
  std::ifstream header(source_path("include/ddprun/sched/env_names.hpp"));
  std::string text((std::istreambuf_iterator<char>(header)), std::istreambuf_iterator<char>());
  const std::regex name_re("=\\s*\"([A-Z][A-Z0-9_]*)\";");
  auto rows = settings_in(scheduler_rows("/nodefile", "host"));
  for (const auto& row : env_fallback_rows()) {
    rows.insert(row.setting);
  }
  const auto& exempt = variables_without_bad_values();
  int names = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), name_re), end; it != end; ++it) {
    const std::string name = (*it)[1];
    ++names;
    EXPECT_TRUE(rows.count(name) != 0 || exempt.count(name) != 0)
        << name << " has no bad-input row and no reason for having none";
  }
  EXPECT_GE(names, 35) << "env_names.hpp no longer parses as expected";
}

}  // namespace
}  // namespace ddprun::test
