#pragma once
// HealthCommand: one run at a time of --health-check (`/bin/sh -c CMD`), started through the
// process::Launcher seam in its own process group, its stdout and stderr on one pipe read on
// the agent's io_context (the last lines kept). The supervisor reaps it like any child and
// hands over its wait status (exited), or ends it at its deadline (time_out); the group is
// always killed afterwards, so nothing the check started outlives it.

#include "ddprun/agent/health_check.hpp"
#include "ddprun/net/asio.hpp"
#include "ddprun/process/launcher.hpp"
#include "ddprun/util/clock.hpp"

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace ddprun::agent {

class HealthCommand {
 public:
  /// `env` is the command's whole environment ("NAME=value"); `launcher` and `clock` must
  /// outlive it.
  HealthCommand(asio::io_context& ctx, process::Launcher& launcher, const util::Clock& clock,
                std::string command, std::chrono::milliseconds timeout,
                std::vector<std::string> env);
  ~HealthCommand();
  HealthCommand(const HealthCommand&) = delete;
  HealthCommand& operator=(const HealthCommand&) = delete;

  /// Starts a run (none may be running). An error says why it could not start.
  Result<void> start();
  /// The running check's process (its group's id), 0 when none runs.
  pid_t pid() const { return pid_; }
  /// The last run's process group, 0 once forgotten (or before the first run).
  pid_t group() const { return last_pgid_; }
  /// When the running check times out; SteadyTime::max() when none runs.
  util::SteadyTime deadline() const;
  /// Its process was reaped with `status`: the verdict, once its output ended (waited for at
  /// most k_output_bound). The group, if anything is left in it, is killed.
  asio::awaitable<HealthVerdict> exited(int status);
  /// Its deadline passed: the group is killed; the verdict.
  asio::awaitable<HealthVerdict> time_out();
  /// Kills the group of the current or last run (SIGKILL); its pid stays known until
  /// forget(), so the caller can wait for the group to empty.
  void kill();
  /// The last run's group: still has members (zombies included until reaped).
  bool group_alive() const;
  /// The last run's group is empty: stop guarding it, forget its pid.
  void forget();

  /// How long the output may go on after the command's own process exited.
  static constexpr std::chrono::milliseconds k_output_bound{1000};

 private:
  struct Output;
  static asio::awaitable<void> read_output(std::shared_ptr<Output> out);
  asio::awaitable<HealthVerdict> finish(CheckEnd end);

  asio::io_context& ctx_;
  process::Launcher& launcher_;
  const util::Clock& clock_;
  std::string command_;
  std::chrono::milliseconds timeout_;
  std::vector<std::string> env_;
  pid_t pid_ = 0;        ///< the running check
  pid_t last_pgid_ = 0;  ///< the group of the last run, until forget()
  util::SteadyTime deadline_ = util::SteadyTime::max();
  std::shared_ptr<Output> output_;
};

}  // namespace ddprun::agent
