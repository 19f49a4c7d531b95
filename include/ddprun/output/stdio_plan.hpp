#pragma once
// Where each worker stream goes (pure): torchrun's redirect/tee/filter rules (spec
// torchrun.md §7.1, DefaultLogsSpecs.reify) mapped to the cheapest plumbing.

#include "ddprun/output/std_spec.hpp"

#include <set>

namespace ddprun::output {

enum class Route {
  inherit,           ///< the agent's own fd: zero cost, no prefix (torchrun's default)
  devnull,           ///< filtered out by --local-ranks-filter and not redirected
  file_only,         ///< the child's fd is the log file itself: zero cost, no pipe
  tee,               ///< pipe to the agent: raw bytes to the file, prefixed lines to console
  console_prefixed,  ///< pipe to the agent: prefixed lines to console, no file
  pass_through,      ///< pipe to the agent: bytes to the console as they are, no file (the
                     ///< agent reads the stream: a faulthandler dump, the stall watchdog)
  file_piped,        ///< pipe to the agent: raw bytes to the file only (file_only, watched)
  discard,           ///< pipe to the agent: nothing kept (devnull, watched)
};

struct WorkerStdioPlan {
  Route out = Route::inherit;
  Route err = Route::inherit;
  friend bool operator==(const WorkerStdioPlan&, const WorkerStdioPlan&) = default;
};

/// Decides both streams of one worker. Tee implies redirect. An empty filter shows every
/// rank; a filtered-out rank keeps its files but is never tailed, and its non-redirected
/// streams go to /dev/null. With files disabled (--log-dir /dev/null) redirects are dropped
/// (torchrun prints to the console then) and tee keeps only its prefixed console copy;
/// unlike torchrun the filter still applies.
WorkerStdioPlan decide_stdio(const StdSpec& redirects, const StdSpec& tee,
                             const std::set<int>& filter, int local_rank,
                             bool files_enabled = true);

/// The same destinations, every stream read by the agent (--stall-timeout watches output):
/// inherit becomes pass_through, file_only file_piped, devnull discard.
WorkerStdioPlan watched(WorkerStdioPlan plan);

/// True when the route needs a pipe read by the agent.
inline bool is_piped(Route r) {
  return r == Route::tee || r == Route::console_prefixed || r == Route::pass_through ||
         r == Route::file_piped || r == Route::discard;
}

}  // namespace ddprun::output
