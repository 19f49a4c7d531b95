#pragma once
// Test helper: run a command with a deadline, capturing stdout and stderr.

#include "ddprun/util/exec_args.hpp"

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "support/ports.hpp"

namespace ddprun::test {

struct RunResult {
  int status = -1;         ///< exit status, or 128+signal
  bool timed_out = false;  ///< killed at the deadline
  std::string out;
  std::string err;
};

/// Every child gets PET_MASTER_PORT set to a free port unless the test sets it, so that
/// concurrently running static single-node launches (which host a store on the master
/// port, as torchrun does) do not collide on 29500.
struct RunOptions {
  std::map<std::string, std::string> env_add;  ///< added to (or replacing in) this process's env
  std::vector<std::string> env_remove;
  std::string cwd;
  std::chrono::milliseconds timeout{60000};
};

/// `strings` as the null-terminated pointer array execve() takes (the launcher's own).
using util::exec_args;

/// Runs argv to completion (or the deadline, then SIGKILL of its process group).
RunResult run(const std::vector<std::string>& argv, const RunOptions& options = {});

/// A child started in the background in its own process group, with stdout/stderr to files.
struct Background {
  pid_t pid = -1;
  std::string out_path;
  std::string err_path;
};
Background start(const std::vector<std::string>& argv, const RunOptions& options = {});
/// Waits for a background child up to `timeout`; returns its status or -1 on timeout.
int wait_for(pid_t pid, std::chrono::milliseconds timeout);

void sleep_a_moment();

/// Polls `cond` every few milliseconds until it holds or `timeout` passes.
template <typename F>
bool eventually(F cond, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) {
      return true;
    }
    sleep_a_moment();
  }
  return cond();
}
std::string read_file(const std::string& path);
/// `KEY=value` lines (envdump.sh output) as a map.
std::map<std::string, std::string> parse_env_file(const std::string& path);
/// A fresh directory under TMPDIR (or /tmp), removed by the caller if it wants.
std::string make_temp_dir(const std::string& prefix);
/// Path of the ddprun binary under test (env DDPRUN_BIN).
std::string ddprun_bin();
/// Absolute path inside the source tree.
std::string source_path(const std::string& relative);
/// Live (non-zombie) processes whose environment holds `NAME=value` (from /proc), for orphan
/// checks: a test tags the launcher's environment and every descendant inherits the tag.
std::vector<pid_t> processes_with_env(const std::string& name_eq_value);
/// A tag unique to this test process and call ("DDPRUN_TEST_TAG=<pid>-<n>").
std::string unique_tag();
/// True when /usr/bin/python3 can import torch.
bool have_torch();

}  // namespace ddprun::test
