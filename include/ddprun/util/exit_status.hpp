#pragma once
// ddprun's exit statuses, the one place they are defined. They are part of the contract
// (the man page's EXIT STATUS, docs/cli.md): tests check the numbers, code uses the names.

namespace ddprun::util {

/// Every worker succeeded; also after --help, --version, --print-config and a successful
/// subcommand.
inline constexpr int k_exit_success = 0;
/// The worker group failed after the allowed restarts, the agent lost its store, a preflight
/// or runtime error, or an internal error (torchrun's ChildFailedError status).
inline constexpr int k_exit_failure = 1;
/// ddprun (or a fan-out) was stopped by a handled signal: torchrun exits 1 then too.
inline constexpr int k_exit_stopped_by_signal = k_exit_failure;
/// A usage or configuration error; nothing was started.
inline constexpr int k_exit_usage = 2;
/// This node was left out of an elastic job: it was the root cause of --rdzv-conf
/// max_node_failures failed rounds in a row and the other nodes went on without it.
inline constexpr int k_exit_excluded = 3;
/// A worker's program exists but could not be executed (the child's status, as in sh and tini).
inline constexpr int k_exit_cannot_execute = 126;
/// A worker's program was not found (the child's status, as in sh and tini).
inline constexpr int k_exit_not_found = 127;
/// A fanned-out node killed by signal N is reported as 128 + N, as a shell does.
inline constexpr int k_exit_signal_base = 128;

}  // namespace ddprun::util
