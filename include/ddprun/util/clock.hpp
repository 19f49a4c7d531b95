#pragma once
// Clock seam: pure policy takes a time point; only shells read the real clock.

#include <chrono>
#include <cstdint>

namespace ddprun::util {

using SteadyTime = std::chrono::steady_clock::time_point;

/// Wall-clock milliseconds since the Unix epoch: how times travel between machines.
inline std::int64_t wall_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

class Clock {
 public:
  virtual ~Clock() = default;
  virtual SteadyTime now() const = 0;
  virtual std::chrono::system_clock::time_point wall_now() const = 0;
};

class SystemClock final : public Clock {
 public:
  SteadyTime now() const override { return std::chrono::steady_clock::now(); }
  std::chrono::system_clock::time_point wall_now() const override {
    return std::chrono::system_clock::now();
  }
};

}  // namespace ddprun::util
