#include "ddprun/rdzv/crash_loop.hpp"

#include "ddprun/util/exit_status.hpp"

#include <algorithm>

namespace ddprun::rdzv {

namespace {

std::string seconds_text(std::chrono::milliseconds d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + " s";
}

}  // namespace

CrashStreak next_streak(const CrashStreak& before, const FailedRound& report) {
  if (!report.quick) {
    return CrashStreak{report.signature, 0};
  }
  if (before.count == 0 || before.signature != report.signature) {
    return CrashStreak{report.signature, 1};
  }
  CrashStreak n{report.signature, before.count + 1, before.hinted_stop_at};
  if (n.count == k_hinted_crash_loop_limit) {
    n.hinted_stop_at = report.at;
  }
  return n;
}

bool is_crash_loop(const CrashStreak& streak, int limit) {
  return limit > 0 && streak.count >= limit;
}

std::string render_crash_loop(const CrashStreak& streak, const RdzvSettings& settings) {
  return "the last " + std::to_string(streak.count) + " attempts failed the same way within " +
         seconds_text(settings.crash_loop_window) + " of their start (" + streak.signature +
         "): restarting would not help (--crash-loop-limit " +
         std::to_string(settings.crash_loop_limit) + ")";
}

std::optional<std::string> render_crash_loop_hint(const CrashStreak& streak,
                                                  const RdzvSettings& settings, WallMs now) {
  if (settings.crash_loop_limit > 0 || streak.count < k_hinted_crash_loop_limit) {
    return std::nullopt;
  }
  const auto since = std::chrono::milliseconds(std::max<WallMs>(0, now - streak.hinted_stop_at));
  return "the last " + std::to_string(streak.count) + " attempts failed the same way within " +
         seconds_text(settings.crash_loop_window) + " of their start (" + streak.signature +
         "); --crash-loop-limit " + std::to_string(k_hinted_crash_loop_limit) +
         " would have stopped the job after " + std::to_string(k_hinted_crash_loop_limit) +
         " of them with exit status " + std::to_string(util::k_exit_do_not_requeue) +
         " (do not requeue), " + seconds_text(since) +
         " ago (the stop is off by default, as in torchrun)";
}

std::optional<RoundHeader> with_crash_loop_stop(const RoundHeader& h,
                                                const RdzvSettings& settings) {
  if (h.closed || !is_crash_loop(h.streak, settings.crash_loop_limit)) {
    return std::nullopt;
  }
  RoundHeader n = h;
  n.closed = true;
  n.closed_at = h.failed_round ? h.failed_round->at : 0;
  n.stop_reason = render_crash_loop(h.streak, settings);
  return n;
}

}  // namespace ddprun::rdzv
