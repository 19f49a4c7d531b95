#pragma once
// Wiring of the output and errors modules into the supervisor's seams.

#include "ddprun/agent/supervisor.hpp"

#include <memory>

namespace ddprun::agent {

/// The WorkerIo of a launch: torchrun's log directory, -r/-t/--local-ranks-filter routing.
/// Bad -r/-t/filter values or an unusable --log-dir throw Fatal before anything is spawned.
/// `clock` stamps the workers' output and bounds the drain; it must outlive the WorkerIo.
std::unique_ptr<WorkerIo> make_worker_io(asio::io_context& ctx, const config::LaunchConfig& cfg,
                                         const util::Env& env, const util::Clock& clock);

}  // namespace ddprun::agent
