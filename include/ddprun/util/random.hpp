#pragma once
// Random bytes from the kernel, for what must differ across thousands of processes started
// at once (nonces, etcd lease IDs): a generator seeded from one 32-bit value would repeat
// between them.
//
// Random timing (backoff spreads, contention jitter, which etcd member is tried first) comes
// from one source per process, agent_random(): seeded from the kernel, or by a test with a
// fixed seed so that a run repeats.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>

namespace ddprun::util {

/// `n` bytes from getrandom(2) (std::random_device where that fails).
std::string random_bytes(std::size_t n);
/// Eight of those bytes as one number.
std::uint64_t random_u64();

/// A seedable source of random numbers, safe to share between threads.
class Random {
 public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}
  /// Starts the sequence again from `seed`.
  void seed(std::uint64_t seed);
  /// Uniform in [0, 1).
  double unit();
  /// Uniform in [0.5, 1.5): a spread for backoff_pause.
  double spread() { return 0.5 + unit(); }
  /// Uniform over all 64-bit values.
  std::uint64_t next();

 private:
  std::mutex mutex_;
  std::mt19937_64 engine_;
};

/// The process' one source of random timing, seeded from random_u64() at first use.
Random& agent_random();

}  // namespace ddprun::util
