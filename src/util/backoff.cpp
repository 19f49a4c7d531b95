#include "ddprun/util/backoff.hpp"

#include "ddprun/util/random.hpp"

#include <algorithm>
#include <cstdint>

namespace ddprun::util {

std::chrono::milliseconds backoff_pause(std::chrono::milliseconds first, int attempt,
                                        int max_doublings, double spread) {
  const auto base = first * (1 << std::clamp(attempt, 0, max_doublings));
  const double ms = static_cast<double>(base.count()) * std::clamp(spread, 0.5, 1.5);
  return std::chrono::milliseconds(static_cast<std::int64_t>(ms));
}

double random_spread() { return agent_random().spread(); }

}  // namespace ddprun::util
