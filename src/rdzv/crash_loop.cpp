#include "ddprun/rdzv/crash_loop.hpp"

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
  if (before.count > 0 && before.signature == report.signature) {
    return CrashStreak{report.signature, before.count + 1};
  }
  return CrashStreak{report.signature, 1};
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

std::optional<RoundHeader> with_crash_loop_stop(const RoundHeader& h,
                                                const RdzvSettings& settings) {
  if (h.closed || !is_crash_loop(h.streak, settings.crash_loop_limit)) {
    return std::nullopt;
  }
  RoundHeader n = h;
  n.closed = true;
  n.stop_reason = render_crash_loop(h.streak, settings);
  return n;
}

}  // namespace ddprun::rdzv
