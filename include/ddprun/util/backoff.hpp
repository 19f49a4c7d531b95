#pragma once
// Pauses between retries that grow and are spread at random, so that the many clients refused
// at once (an overloaded etcd cluster, thousands of agents) neither come back at once nor keep
// their pace.

#include <chrono>

namespace ddprun::util {

/// `first` doubled `attempt` times (0-based, at most `max_doublings`), times `spread` clamped
/// to [0.5, 1.5].
std::chrono::milliseconds backoff_pause(std::chrono::milliseconds first, int attempt,
                                        int max_doublings, double spread);
/// A spread for backoff_pause, uniform in [0.5, 1.5), from agent_random() (random.hpp).
double random_spread();

}  // namespace ddprun::util
