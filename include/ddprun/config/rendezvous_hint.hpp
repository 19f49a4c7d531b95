#pragma once
// What a multi-node launch whose rendezvous stays incomplete may have wrong, and the exact
// flags that fix it (logged once at WARNING while the agent waits for the missing nodes).

#include "ddprun/config/launch_config.hpp"

#include <string>

namespace ddprun::config {

/// The hint for `config` (a multi-node static or c10d launch) whose rendezvous store is at
/// `store` (--master_addr or the --rdzv_endpoint host, at the port in use: a derived port is
/// known only once bound or found), one sentence per line (no trailing newline);
/// `store_is_loopback`: that host is a loopback name or address.
std::string render_rendezvous_hint(const LaunchConfig& config, const Endpoint& store,
                                   bool store_is_loopback);

}  // namespace ddprun::config
