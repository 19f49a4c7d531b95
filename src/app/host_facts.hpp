#pragma once
// Reads the facts about this machine that config::resolve needs.

#include "ddprun/config/launch_config.hpp"

namespace ddprun::app {

config::HostFacts gather_host_facts(const util::Env& env);

/// Counts CUDA_VISIBLE_DEVICES entries (ints, GPU-/MIG- UUIDs); empty means zero.
int count_visible_devices(const std::string& value);

}  // namespace ddprun::app
