#pragma once
// Zero-config under schedulers: values Slurm, PBS, LSF, Flux or MPI give this launch fill the
// settings the user left at their defaults (precedence: flag > PET_* > scheduler > default).

#include "ddprun/cli/args.hpp"
#include "ddprun/sched/detect.hpp"

#include <vector>

namespace ddprun::app {

/// Reads what detection needs from the machine (hostname, PBS nodefile) and runs it. Throws
/// Fatal for a refused launch (for example srun starting several ddprun per node).
sched::Detected detect_scheduler(const util::Env& env, const cli::ParsedArgs& args, int cpu_count);

/// Overlays detected values on settings still at their defaults. A multi-node launch becomes
/// a static rendezvous on the head host (node ranks are the scheduler's node indices) unless
/// the user chose c10d, which then gets the head host as its endpoint.
void apply_scheduler(cli::ParsedArgs& args, const sched::Detected& detected);

/// The job's candidate rendezvous ports when apply_scheduler chose the port (static
/// --master-port or the c10d endpoint's port); empty when the user gave it.
std::vector<int> derived_ports(const cli::ParsedArgs& args, const sched::Detected& detected);

}  // namespace ddprun::app
