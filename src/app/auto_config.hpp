#pragma once
// Zero-config under schedulers: the shell around sched::detect (this host's name, the PBS
// nodefile). config::resolve applies what it finds.

#include "ddprun/cli/args.hpp"
#include "ddprun/sched/detect.hpp"

namespace ddprun::app {

/// Reads what detection needs from the machine (hostname, PBS nodefile) and runs it; with
/// --no-auto only the batch job (for its token file) is filled. A launch that will fan out
/// (fanout::fan_out_via) gets the whole job's view (fanout::whole_job_view). Throws Fatal for a
/// refused launch (for example srun starting several ddprun per node).
sched::Detected detect_scheduler(const util::Env& env, const cli::ParsedArgs& args);

}  // namespace ddprun::app
