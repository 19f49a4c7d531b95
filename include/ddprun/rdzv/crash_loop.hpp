#pragma once
// Telling a crash loop, as pure functions: the same failure, attempt after attempt, before any
// progress (an attempt that fails within --crash-loop-window of its start). Each failed round
// carries how it failed (FailedRound::signature: the root-cause rank, its exit code or signal,
// its last error line); the header counts the latest such failures in a row (CrashStreak).
// Once --crash-loop-limit of them are in a row, restarting would not help: the run is closed
// with the reason, in the same update that recorded the failure, so every node reads the same
// verdict and stops with k_exit_do_not_requeue instead of spending --max-restarts. A node alone
// keeps the same streak itself (LocalRendezvous).
//
// The stop is off by default (limit 0): torchrun spends every restart, and a job that fails the
// same way a few times and then gets through (a flaky file system at start, an OOM kill that
// depends on what else runs) must finish under ddprun too. While it is off, a streak that
// reaches k_hinted_crash_loop_limit is only named, with what the limit would have saved
// (render_crash_loop_hint), so the feature is found where it would help.

#include "ddprun/rdzv/settings.hpp"
#include "ddprun/rdzv/state.hpp"

#include <optional>
#include <string>

namespace ddprun::rdzv {

/// The streak after `report`, given the one before it: one longer when it failed the same way
/// before making progress, 1 when it starts a new one, 0 when it had made progress.
CrashStreak next_streak(const CrashStreak& before, const FailedRound& report);

/// The limit the hint names while the stop is off: a streak this long is worth a look.
inline constexpr int k_hinted_crash_loop_limit = 3;

/// Whether `streak` is a crash loop under `limit` (0: never).
bool is_crash_loop(const CrashStreak& streak, int limit);

/// "the last 3 attempts failed the same way within 300 s of their start (rank 1: exitcode 1:
/// ValueError: bad value): restarting would not help (--crash-loop-limit 3)".
std::string render_crash_loop(const CrashStreak& streak, const RdzvSettings& settings);

/// While the stop is off (settings.crash_loop_limit 0) and `streak` reached
/// k_hinted_crash_loop_limit: "the last 5 attempts failed the same way within 300 s of their
/// start (rank 0: SIGKILL); --crash-loop-limit 3 would have stopped the job after 3 of them
/// with exit status 3 (do not requeue), 42 s ago (the stop is off by default, as in torchrun)",
/// `now` being the wall time of the restart or the job's end. nullopt otherwise.
std::optional<std::string> render_crash_loop_hint(const CrashStreak& streak,
                                                  const RdzvSettings& settings, WallMs now);

/// Closes the run with the crash loop's reason when `h`'s streak is one; nullopt otherwise.
std::optional<RoundHeader> with_crash_loop_stop(const RoundHeader& h, const RdzvSettings& settings);

}  // namespace ddprun::rdzv
