#pragma once
// The scheduler's part of resolve(): detected values fill the settings the user left at their
// defaults (precedence: flag > PET_* > scheduler > default). Module-private.

#include "ddprun/cli/args.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/sched/detect.hpp"

#include <optional>
#include <vector>

namespace ddprun::config::detail {

/// Overlays detected values on settings still at their defaults. A multi-node launch becomes
/// a static rendezvous on the head host (node ranks are the scheduler's node indices) unless
/// the user chose c10d, which then gets the head host as its endpoint.
cli::ParsedArgs apply_scheduler(cli::ParsedArgs args, const sched::Detected& detected);

/// The job's candidate rendezvous ports when apply_scheduler chose the port (static
/// --master-port or the c10d endpoint's port); empty when the user gave it.
std::vector<int> derived_ports(const cli::ParsedArgs& args, const sched::Detected& detected);

/// This node's index from the scheduler, when it gave one.
std::optional<int> node_index_of(const sched::Detected& detected);

}  // namespace ddprun::config::detail
