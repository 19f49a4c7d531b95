#pragma once
// ddprun's exit statuses, the one place they are defined. They are part of the contract
// (the man page's EXIT STATUS, docs/cli.md, docs/schedulers.md's requeue example): tests check
// the numbers, code uses the names. A batch script can act on them: 3 says do not requeue
// (restarting would not help), 128 + N says a signal stopped the job before it ended
// (preemption, a time limit: requeueing is right), 1 says the workers failed after the allowed
// restarts.

namespace ddprun::util {

/// Every worker succeeded; also after --help, --version, --print-config and a successful
/// subcommand.
inline constexpr int k_exit_success = 0;
/// The worker group failed after the allowed restarts, the agent lost its store, a preflight
/// or runtime error, or an internal error (torchrun's ChildFailedError status).
inline constexpr int k_exit_failure = 1;
/// A usage or configuration error; nothing was started.
inline constexpr int k_exit_usage = 2;
/// Do not requeue: restarting would not help. The job stopped in a crash loop (the same
/// failure, attempt after attempt, before any progress: --crash-loop-limit), or this node was
/// left out of an elastic job (the root cause of --rdzv-conf max_node_failures failed rounds in
/// a row; the other nodes went on without it).
inline constexpr int k_exit_do_not_requeue = 3;
inline constexpr int k_exit_excluded = k_exit_do_not_requeue;
/// A worker's program exists but could not be executed (the child's status, as in sh and tini).
inline constexpr int k_exit_cannot_execute = 126;
/// A worker's program was not found (the child's status, as in sh and tini).
inline constexpr int k_exit_not_found = 127;
/// A fanned-out node killed by signal N is reported as 128 + N, as a shell does.
inline constexpr int k_exit_signal_base = 128;

/// ddprun (or a fan-out) stopped by handled signal `sig` (SIGTERM, SIGINT, SIGHUP, SIGUSR1,
/// SIGUSR2, SIGQUIT) before the job ended: 128 + sig, as a shell reports a process the signal
/// ended (143 for SIGTERM). torchrun exits 1 then; ddprun tells it apart from a failure, so a
/// batch script can requeue a preempted or timed-out job and not a failed one.
constexpr int exit_for_signal(int sig) { return k_exit_signal_base + sig; }

}  // namespace ddprun::util
