#pragma once
// The app's side of fan-out (ddprun::fanout): gather the machine facts a plan needs, log it and
// run it instead of a local agent.

#include "ddprun/cli/args.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/sched/detect.hpp"
#include "ddprun/util/env.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ddprun::app {

/// When this launch should start ddprun on every node (--launcher, see fanout::fan_out_via),
/// runs the per-node commands and returns the fan-out's exit status; nullopt means launch the
/// agent here as usual. Throws Fatal for a launcher that cannot be used.
std::optional<int> fan_out_if_needed(const std::vector<std::string>& args,
                                     const cli::ParsedArgs& parsed, const sched::Detected& detected,
                                     const util::Env& env, const config::LaunchConfig& cfg);

}  // namespace ddprun::app
