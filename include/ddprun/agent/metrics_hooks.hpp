#pragma once
// Feeding Metrics (metrics.hpp) from the agent: the supervisor's hooks, and the agent's own
// CPU, memory and start time read from /proc/self at each scrape.

#include "ddprun/agent/metrics.hpp"
#include "ddprun/agent/policy.hpp"
#include "ddprun/agent/supervisor_hooks.hpp"
#include "ddprun/util/clock.hpp"

#include <optional>

namespace ddprun::agent {

/// `inner` with the metrics' counting done first in each hook: a round's end by cause (the
/// first failed worker's exit decides between exit_code and signal; an expired file timer
/// makes it file_timer), restarts, join durations, the learned stall timeout, an unhealthy
/// node's withdrawal. `metrics` and `clock` must outlive the hooks.
SupervisorHooks with_metrics(const SupervisorHooks& inner, Metrics& metrics,
                             const util::Clock& clock);

/// The cause a round's `outcome` is counted under, given what failed first in it; nullopt for
/// an outcome that is no failure (success, the agent's own signal).
std::optional<RoundCause> cause_of(Outcome outcome, std::optional<RoundCause> first_failure);

/// The agent's own figures for the process_* metrics (zeros where /proc cannot be read).
struct ProcessFigures {
  double cpu_seconds = 0;
  std::uint64_t resident_bytes = 0;
  double start_time_seconds = 0;
};
ProcessFigures read_process_figures();

}  // namespace ddprun::agent
