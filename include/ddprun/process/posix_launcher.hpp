#pragma once
// fork/exec implementation of Launcher. See src/process/posix_launcher.cpp for the sequence.

#include "ddprun/process/guardian.hpp"
#include "ddprun/process/launcher.hpp"

namespace ddprun::process {

class PosixLauncher final : public Launcher {
 public:
  PosixLauncher() = default;
  /// Every group it starts is watched by `guardian` (killed if the agent dies) until
  /// forget_group.
  explicit PosixLauncher(Guardian* guardian) : guardian_(guardian) {}
  Result<pid_t> spawn(const SpawnRequest& request) override;
  bool signal_group(pid_t pgid, int sig) override;
  void forget_group(pid_t pgid) override;
  std::vector<Reaped> reap_exited() override;
  bool group_alive(pid_t pgid) const override;
  void become_subreaper() override;
  bool signal_ends(pid_t pid, int sig) const override;
  ProcessState state_of(pid_t pid) const override;

 private:
  Guardian* guardian_ = nullptr;
};

/// Makes this process a child subreaper, so orphaned grandchildren of workers are
/// re-parented to the agent (and reaped by it) instead of init.
void become_subreaper();

/// True when a process group still has members (kill(-pgid, 0) succeeds).
bool group_alive(pid_t pgid);

}  // namespace ddprun::process

namespace ddprun::process {

/// Reaps every child that has exited, without blocking (waitpid(-1, WNOHANG) until none is
/// left). The agent owns all its children, including orphans adopted as subreaper.
std::vector<Reaped> reap_exited();

}  // namespace ddprun::process
