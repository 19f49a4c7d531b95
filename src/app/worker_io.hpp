#pragma once
// Wiring of the output and errors modules into the supervisor's seams.

#include <memory>

#include "ddprun/agent/supervisor.hpp"

namespace ddprun::app {

std::unique_ptr<agent::WorkerIo> make_worker_io(asio::io_context& ctx,
                                                const config::LaunchConfig& cfg);

agent::SupervisorHooks make_hooks(const config::LaunchConfig& cfg, agent::WorkerIo& io);

}  // namespace ddprun::app
