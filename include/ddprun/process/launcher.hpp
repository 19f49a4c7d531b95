#pragma once
// The process seam: what the agent asks of the OS to start and signal workers.
// PosixLauncher does it with fork/exec; tests/support/fake_launcher.hpp scripts it in memory.

#include "ddprun/process/exit_info.hpp"
#include "ddprun/util/result.hpp"

#include <sys/types.h>

#include <string>
#include <vector>

namespace ddprun::process {

/// One reaped child: its pid and its raw wait status.
struct Reaped {
  pid_t pid;
  int status;
};

/// Everything a child needs, built before fork so the child side only does syscalls.
struct SpawnRequest {
  std::vector<std::string> argv;  ///< argv[0] is resolved against PATH from `env` if no '/'
  std::vector<std::string> env;   ///< "NAME=value" entries, the child's whole environment
  std::string cwd;                ///< empty: inherit
  int stdout_fd = -1;             ///< dup2'd onto fd 1; -1 inherits
  int stderr_fd = -1;             ///< dup2'd onto fd 2; -1 inherits
  std::vector<int> cpu_affinity;  ///< empty: inherit the agent's mask
};

class Launcher {
 public:
  virtual ~Launcher() = default;
  /// Starts the child in its own process group (pgid == pid) and returns its pid once exec
  /// succeeded. Exec failures ("no such file", "permission denied") come back as errors
  /// naming the path and errno; the failed child has already been reaped.
  virtual Result<pid_t> spawn(const SpawnRequest& request) = 0;
  /// Sends `sig` to the whole process group `pgid`. Returns false when the group is gone.
  virtual bool signal_group(pid_t pgid, int sig) = 0;
  /// The group `pgid` is empty now and its id may be reused: stop guarding it.
  virtual void forget_group(pid_t /*pgid*/) {}
  /// Reaps every child that has exited, without blocking; the caller learns that there may be
  /// some from SIGCHLD.
  virtual std::vector<Reaped> reap_exited() = 0;
  /// True while the process group `pgid` still has members.
  virtual bool group_alive(pid_t pgid) const = 0;
  /// Called once before the first spawn: from then on, children orphaned by a worker are
  /// adopted (and so reaped) by this process.
  virtual void become_subreaper() {}
  /// Whether `sig` would end the process `pid` (it neither catches nor ignores it and its
  /// default action terminates).
  virtual bool signal_ends(pid_t pid, int sig) const = 0;
  /// What the kernel says of `pid` now (its state and wait channel), for naming a process that
  /// does not die.
  virtual ProcessState state_of(pid_t pid) const = 0;
};

/// Finds `program` the way execvp would, using `path_var` (a PATH value). Programs with a
/// '/' are returned as given if they exist and are executable.
Result<std::string> resolve_executable(const std::string& program, const std::string& path_var);

}  // namespace ddprun::process
