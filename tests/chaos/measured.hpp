#pragma once
// Figures the chaos tests print for docs/reliability.md: recorded, never asserted (the
// machine is shared and noisy).

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <string>

namespace ddprun::test::chaos {

using Steady = std::chrono::steady_clock;

inline double seconds_since(Steady::time_point t0) {
  return std::chrono::duration<double>(Steady::now() - t0).count();
}

/// Prints "[measured] what: N s" and records it as a test property.
inline void report(const std::string& what, double seconds) {
  std::cout << "[measured] " << what << ": " << seconds << " s\n";
  ::testing::Test::RecordProperty(what, std::to_string(seconds));
}

}  // namespace ddprun::test::chaos
