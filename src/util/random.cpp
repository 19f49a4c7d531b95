#include "ddprun/util/random.hpp"

#include <sys/random.h>

#include <cstring>
#include <random>

namespace ddprun::util {

std::string random_bytes(std::size_t n) {
  std::string bytes(n, '\0');
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t r = getrandom(bytes.data() + got, bytes.size() - got, 0);
    if (r <= 0) {
      break;
    }
    got += static_cast<std::size_t>(r);
  }
  if (got < bytes.size()) {
    // getrandom(2) is missing or interrupted: the kernel's entropy through random_device.
    std::random_device rd;
    for (std::size_t i = got; i < bytes.size(); ++i) {
      bytes[i] = static_cast<char>(rd() & 0xffU);
    }
  }
  return bytes;
}

std::uint64_t random_u64() {
  const auto bytes = random_bytes(sizeof(std::uint64_t));
  std::uint64_t v = 0;
  std::memcpy(&v, bytes.data(), sizeof v);
  return v;
}

void Random::seed(std::uint64_t seed) {
  const std::lock_guard lock(mutex_);
  engine_.seed(seed);
}

double Random::unit() {
  const std::lock_guard lock(mutex_);
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine_);
}

std::uint64_t Random::next() {
  const std::lock_guard lock(mutex_);
  return engine_();
}

Random& agent_random() {
  static Random random(random_u64());
  return random;
}

}  // namespace ddprun::util
