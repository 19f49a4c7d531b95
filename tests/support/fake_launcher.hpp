#pragma once
// FakeLauncher: the process seam in memory, for tests of the supervisor's decisions that fork
// nothing. Each "spawned" worker gets a made-up pid that leads its own group. The test scripts
// exits (exit_with, kill_with); a signal sent to a group is recorded and, unless the worker was
// told to ignore it, ends that worker as the real one would. Every exit raises SIGCHLD in this
// process, which is exactly the wake-up the supervisor's signal_set waits for; reap_exited()
// then hands the exits over. Single-threaded, like the agent.

#include "ddprun/process/launcher.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <utility>
#include <vector>

namespace ddprun::test {

class FakeLauncher final : public process::Launcher {
 public:
  struct Sent {
    pid_t pgid;
    int sig;
  };

  Result<pid_t> spawn(const process::SpawnRequest& request) override {
    if (fail_spawn_at_ == static_cast<int>(spawned_.size())) {
      return make_error(ErrorCode::io, "exec " + request.argv.front() + ": no such file");
    }
    const pid_t pid = next_pid_++;
    spawned_.push_back(request);
    pids_.push_back(pid);
    live_.insert(pid);
    return pid;
  }

  bool signal_group(pid_t pgid, int sig) override {
    sent_.push_back({pgid, sig});
    if (live_.count(pgid) == 0 && stragglers_.count(pgid) == 0) {
      return false;
    }
    if (unkillable_.count(pgid) != 0) {
      return true;  // pending: the process sleeps in the kernel and takes no signal
    }
    if (sig == SIGKILL || (sig != SIGCONT && ignores_.count(pgid) == 0)) {
      stragglers_.erase(pgid);
      if (live_.count(pgid) != 0) {
        finish(pgid, sig);  // killed by `sig`: the raw wait status is the signal number
      }
    }
    return true;
  }

  void forget_group(pid_t pgid) override { forgotten_.push_back(pgid); }

  std::vector<process::Reaped> reap_exited() override { return std::exchange(exited_, {}); }

  bool group_alive(pid_t pgid) const override {
    return live_.count(pgid) != 0 || stragglers_.count(pgid) != 0;
  }

  void become_subreaper() override { subreaper_ = true; }

  bool signal_ends(pid_t pid, int sig) const override {
    return sig == SIGKILL || (sig != SIGCONT && ignores_.count(pid) == 0);
  }

  process::ProcessState state_of(pid_t pid) const override {
    if (unkillable_.count(pid) != 0) {
      return {'D', "__refrigerator"};
    }
    return {live_.count(pid) != 0 ? 'S' : '?', ""};
  }

  // --- Scripting ---
  /// The worker `pid` exits with `code`.
  void exit_with(pid_t pid, int code) { finish(pid, (code & 0xff) << 8); }
  /// The worker `pid` is killed by `sig` (not through the launcher).
  void kill_with(pid_t pid, int sig) { finish(pid, sig); }
  /// The worker `pid` ignores every signal but SIGKILL.
  void ignore_signals(pid_t pid) { ignores_.insert(pid); }
  /// After `pid` exits, its group keeps a member (a grandchild) until a signal ends it.
  void leave_straggler(pid_t pid) { stragglers_.insert(pid); }
  /// The worker `pid` sleeps in the kernel (state D): no signal, SIGKILL included, ends it
  /// until thaw(pid).
  void make_unkillable(pid_t pid) { unkillable_.insert(pid); }
  /// The unkillable `pid` wakes up and dies of the SIGKILL it was sent.
  void thaw(pid_t pid) {
    unkillable_.erase(pid);
    finish(pid, SIGKILL);
  }
  /// The spawn with this index (0-based over the whole test) fails.
  void fail_spawn_at(int index) { fail_spawn_at_ = index; }

  // --- What happened ---
  const std::vector<pid_t>& pids() const { return pids_; }
  const std::vector<process::SpawnRequest>& spawned() const { return spawned_; }
  const std::vector<Sent>& sent() const { return sent_; }
  const std::vector<pid_t>& forgotten() const { return forgotten_; }
  bool subreaper() const { return subreaper_; }
  /// The signals sent to `pgid`, in order.
  std::vector<int> signals_to(pid_t pgid) const {
    std::vector<int> out;
    for (const auto& s : sent_) {
      if (s.pgid == pgid) {
        out.push_back(s.sig);
      }
    }
    return out;
  }

 private:
  void finish(pid_t pid, int status) {
    if (live_.erase(pid) == 0) {
      return;
    }
    exited_.push_back({pid, status});
    ::kill(::getpid(), SIGCHLD);
  }

  pid_t next_pid_ = 40000;
  int fail_spawn_at_ = -1;
  bool subreaper_ = false;
  std::vector<process::SpawnRequest> spawned_;
  std::vector<pid_t> pids_;
  std::set<pid_t> live_;
  std::set<pid_t> ignores_;
  std::set<pid_t> stragglers_;
  std::set<pid_t> unkillable_;
  std::vector<process::Reaped> exited_;
  std::vector<Sent> sent_;
  std::vector<pid_t> forgotten_;
};

}  // namespace ddprun::test
