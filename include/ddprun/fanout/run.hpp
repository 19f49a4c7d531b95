#pragma once
// The I/O half of fan-out: run every node's launcher command, prefix their output with the host,
// forward signals, and stop all nodes when one fails.

#include "ddprun/fanout/plan.hpp"
#include "ddprun/util/env.hpp"

#include <chrono>
#include <vector>

namespace ddprun::fanout {

/// How the nodes are stopped: the signals forwarded to them (the agent's --signals-to-handle)
/// and the grace before SIGKILL (--shutdown-timeout).
struct Stopping {
  std::chrono::milliseconds shutdown_timeout;
  std::vector<int> forwarded_signals;
};

/// Runs one child per node of `plan` with `env` as its environment, stdout and stderr through
/// pipes, each line written to our own stdout or stderr as "[host] line". The signals in
/// `stopping.forwarded_signals` are forwarded to every child's process group, SIGKILL follows
/// after `stopping.shutdown_timeout`; the first node whose command exits non-zero stops the
/// others the same way with SIGTERM. Returns 0
/// when every node succeeded, else the first failed node's exit code (128 + signal when it was
/// killed). After a forwarded signal everything is stopped and the result is 1, as for the agent.
/// Blocks until every child is reaped; single-threaded, uses a signalfd and poll().
int run_plan(const Plan& plan, const util::Env& env, const Stopping& stopping);

}  // namespace ddprun::fanout
