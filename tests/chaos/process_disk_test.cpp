// Chaos, one node: a full disk under --log-dir, directories ddprun cannot write, and a
// missing interpreter or script. What must hold: one clear line naming the path or value,
// no crash, no hang, and (disk full) the workers' output still reaches the console.
// The full disk is a small tmpfs, mounted only when running as root (skipped otherwise);
// unwritable directories are a read-only tmpfs as root and a mode 0555 directory otherwise.

#include <gtest/gtest.h>

#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "support/subprocess.hpp"

using namespace ddprun::test;
namespace fs = std::filesystem;

namespace {

constexpr auto k_run_timeout = std::chrono::seconds(60);

/// A tmpfs mounted on a fresh directory for the test's lifetime; `ok` false (with the reason)
/// where this process may not mount.
class Tmpfs {
 public:
  explicit Tmpfs(const std::string& options) : path_(make_temp_dir("ddprun-chaos-fs-")) {
    if (getuid() != 0) {
      reason_ = "needs root to mount a tmpfs";
    } else if (mount("tmpfs", path_.c_str(), "tmpfs", 0, options.c_str()) != 0) {
      reason_ = "mount -t tmpfs failed: " + std::string(std::strerror(errno));
    }
  }
  ~Tmpfs() {
    if (reason_.empty()) {
      umount2(path_.c_str(), MNT_DETACH);
    }
  }
  Tmpfs(const Tmpfs&) = delete;
  Tmpfs& operator=(const Tmpfs&) = delete;
  bool ok() const { return reason_.empty(); }
  const std::string& reason() const { return reason_; }
  const std::string& path() const { return path_; }
  /// Makes it read-only.
  bool remount_read_only() {
    return mount("tmpfs", path_.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr) == 0;
  }

 private:
  std::string path_;
  std::string reason_;
};

/// Writes until the filesystem refuses (ENOSPC), so nothing more fits.
void fill(const std::string& dir) {
  std::ofstream f(dir + "/filler", std::ios::binary);
  std::string block(4096, 'x');
  while (f.write(block.data(), static_cast<std::streamsize>(block.size())) && f.flush()) {
  }
}

/// A directory nobody may create anything in: a read-only tmpfs as root, mode 0555 otherwise.
struct Unwritable {
  std::unique_ptr<Tmpfs> fs;
  std::string path;
};
Unwritable unwritable_dir() {
  Unwritable u;
  if (getuid() == 0) {
    u.fs = std::make_unique<Tmpfs>("size=64k");
    if (u.fs->ok() && u.fs->remount_read_only()) {
      u.path = u.fs->path();
    }
    return u;
  }
  u.path = make_temp_dir("ddprun-chaos-ro-");
  fs::permissions(u.path, fs::perms::owner_read | fs::perms::owner_exec);
  return u;
}

RunResult run_ddprun(const std::vector<std::string>& args) {
  std::vector<std::string> argv{ddprun_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, RunOptions{{}, {}, "", k_run_timeout});
}

/// The last line of ddprun's stderr.
std::string last_line(const std::string& err) {
  auto trimmed = err.substr(0, err.find_last_not_of('\n') + 1);
  return trimmed.substr(trimmed.rfind('\n') + 1);
}

}  // namespace

TEST(ChaosDisk, FullLogDirIsReportedAndOutputStillReachesTheConsole) {
  Tmpfs tmp("size=64k");
  if (!tmp.ok()) {
    GTEST_SKIP() << tmp.reason();
  }
  fill(tmp.path());
  auto r = run_ddprun({"--nproc_per_node=2", "--log_dir=" + tmp.path() + "/logs", "--tee=3",
                       "--no_python", "/bin/sh", "-c", "echo hello from $RANK; echo oops >&2"});
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("hello from 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("hello from 1"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("oops"), std::string::npos) << r.err;
  for (const char* stream : {"stdout.log", "stderr.log"}) {
    EXPECT_NE(r.err.find("/0/" + std::string(stream) + " (No space left on device)"),
              std::string::npos)
        << r.err;
  }
  EXPECT_NE(r.err.find("could not write "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(tmp.path() + "/logs/"), std::string::npos) << r.err;
}

TEST(ChaosDisk, NoInodeLeftForTheRunDirectoryIsOneLine) {
  Tmpfs tmp("size=64k,nr_inodes=2");  // the root directory and one more
  if (!tmp.ok()) {
    GTEST_SKIP() << tmp.reason();
  }
  fs::create_directory(tmp.path() + "/logs");
  auto r = run_ddprun(
      {"--nproc_per_node=1", "--log_dir=" + tmp.path() + "/logs", "--no_python", "/bin/true"});
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(last_line(r.err).find("--log-dir '" + tmp.path() + "/logs'"), std::string::npos)
      << r.err;
  EXPECT_NE(last_line(r.err).find("No space left on device"), std::string::npos) << r.err;
}

TEST(ChaosDisk, UnwritableDirectoriesAreOneLineNamingThePath) {
  auto ro = unwritable_dir();
  if (ro.path.empty()) {
    GTEST_SKIP() << (ro.fs ? ro.fs->reason() : "no unwritable directory");
  }
  // A directory that cannot be made is a bad value (2); an existing one that refuses the run
  // directory is an I/O failure (1).
  struct Row {
    std::vector<std::string> args;
    std::string names;
    int status;
  } rows[] = {
      {{"--log_dir=" + ro.path}, "--log-dir '" + ro.path + "'", 1},
      {{"--log_dir=" + ro.path + "/sub"}, "--log-dir '" + ro.path + "/sub'", 2},
      {{"--events_file=" + ro.path + "/events.jsonl"}, "--events-file '" + ro.path, 2},
  };
  for (const auto& row : rows) {
    auto args = row.args;
    args.insert(args.end(), {"--nproc_per_node=1", "--no_python", "/bin/true"});
    auto r = run_ddprun(args);
    EXPECT_FALSE(r.timed_out) << row.names;
    EXPECT_EQ(r.status, row.status) << r.err;
    EXPECT_EQ(last_line(r.err).rfind("ddprun: error: ", 0), 0u) << r.err;
    EXPECT_NE(last_line(r.err).find(row.names), std::string::npos) << r.err;
  }
}

TEST(ChaosDisk, UnwritableAgentErrorFileIsReportedAndTheStatusKept) {
  auto ro = unwritable_dir();
  if (ro.path.empty()) {
    GTEST_SKIP() << (ro.fs ? ro.fs->reason() : "no unwritable directory");
  }
  auto error_file = ro.path + "/agent/error.json";
  auto r = run({ddprun_bin(), "--nproc_per_node=1", "--no_python", "/bin/sh", "-c", "exit 3"},
               RunOptions{{{"TORCHELASTIC_ERROR_FILE", error_file}}, {}, "", k_run_timeout});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("cannot write the agent's error file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(error_file), std::string::npos) << r.err;
}

TEST(ChaosDisk, MissingInterpreterOrScriptIsOneLineNamingIt) {
  auto dir = make_temp_dir("ddprun-chaos-py-");
  auto script = dir + "/train.py";
  std::ofstream(script) << "print('never runs')\n";
  struct Row {
    std::vector<std::string> args;
    std::string names;
  } rows[] = {
      {{"--python=/nonexistent/python3", script}, "'/nonexistent/python3'"},
      {{"--python=no-such-python-xyz", script}, "'no-such-python-xyz'"},
      {{"--python=/bin/sh", dir + "/missing.py"}, "'" + dir + "/missing.py'"},
      {{"--no_python", dir + "/missing.sh"}, "'" + dir + "/missing.sh'"},
      {{"--no_python", script}, "'" + script + "'"},  // not executable
  };
  for (const auto& row : rows) {
    auto args = row.args;
    args.insert(args.begin(), "--nproc_per_node=2");
    auto r = run_ddprun(args);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.out, "");
    // Exactly one line, and it names the value.
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(row.names), std::string::npos) << r.err;
  }
}
