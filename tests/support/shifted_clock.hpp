#pragma once
// A test clock that runs at the real rate but far from the real time: its steady time starts a
// day after the real one and its wall time at 2001-09-09 01:46:40 UTC (10^9 s). Waits still take
// real time (Asio's timers sleep for deadline - now()), but every time point a component reports
// shows whether it came through the util::Clock seam or from the system clock directly.

#include "ddprun/util/clock.hpp"

#include <chrono>

namespace ddprun::test {

class ShiftedClock final : public util::Clock {
 public:
  static constexpr std::chrono::seconds k_steady_shift{86400};
  static constexpr std::chrono::seconds k_wall_epoch{1000000000};

  util::SteadyTime now() const override {
    return std::chrono::steady_clock::now() + k_steady_shift;
  }
  std::chrono::system_clock::time_point wall_now() const override {
    return std::chrono::system_clock::time_point(k_wall_epoch) + (now() - started_);
  }
  /// The wall time this clock started at.
  static std::chrono::system_clock::time_point wall_start() {
    return std::chrono::system_clock::time_point(k_wall_epoch);
  }

 private:
  util::SteadyTime started_ = std::chrono::steady_clock::now() + k_steady_shift;
};

}  // namespace ddprun::test
