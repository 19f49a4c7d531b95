#pragma once
// The multi-process rdzv_scale_bench (issue #28): one store process and P node processes, so
// that no process holds both ends of every connection or more descriptors than its limit.

#include "rdzv_scale_common.hpp"

namespace rdzv_scale {

/// Runs the simulation that `a` describes (a.processes >= 1), prints its report, and returns
/// the exit status: 0 when every node joined (and re-formed, with --lose-one).
int run_processes(const Args& a);

}  // namespace rdzv_scale
