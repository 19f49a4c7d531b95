#include "ddprun/output/stdio_plan.hpp"

namespace ddprun::output {
namespace {

Route decide_stream(bool redirect, bool tee, bool shown, bool files_enabled) {
  if (!files_enabled) {
    if (!shown) {
      return Route::devnull;
    }
    return tee ? Route::console_prefixed : Route::inherit;
  }
  if (tee) {
    return shown ? Route::tee : Route::file_only;
  }
  if (redirect) {
    return Route::file_only;
  }
  return shown ? Route::inherit : Route::file_only;
}

Route watched(Route r) {
  switch (r) {
    case Route::inherit:
      return Route::pass_through;
    case Route::file_only:
      return Route::file_piped;
    case Route::devnull:
      return Route::discard;
    case Route::tee:
    case Route::console_prefixed:
    case Route::pass_through:
    case Route::file_piped:
    case Route::discard:
      break;
  }
  return r;
}

}  // namespace

WorkerStdioPlan watched(WorkerStdioPlan plan) { return {watched(plan.out), watched(plan.err)}; }

WorkerStdioPlan decide_stdio(const StdSpec& redirects, const StdSpec& tee,
                             const std::set<int>& filter, int local_rank, bool files_enabled) {
  const Std r = redirects.for_rank(local_rank);
  const Std t = tee.for_rank(local_rank);
  const bool shown = filter.empty() || filter.count(local_rank) > 0;
  return WorkerStdioPlan{decide_stream(r.out, t.out, shown, files_enabled),
                         decide_stream(r.err, t.err, shown, files_enabled)};
}

}  // namespace ddprun::output
