#pragma once
// Wiring of the output and errors modules into the supervisor's seams.

#include "ddprun/agent/supervisor.hpp"

#include <memory>

namespace ddprun::agent {

/// The WorkerIo of a launch: torchrun's log directory, -r/-t/--local-ranks-filter routing.
/// Bad -r/-t/filter values or an unusable --log-dir throw Fatal before anything is spawned.
/// `clock` stamps the workers' output and bounds the drain; it and `cfg` (where the output
/// goes) must outlive the WorkerIo. The other parts say the log directory's name (the rendezvous
/// id), the prefixes' role and whether the agent must see the streams (--stall-timeout,
/// faulthandler dumps).
std::unique_ptr<WorkerIo> make_worker_io(asio::io_context& ctx, const config::OutputPlan& cfg,
                                         const config::WorkerGroup& group,
                                         const config::RendezvousPlan& rdzv,
                                         const config::SupervisorOptions& options,
                                         const config::WorkerCommand& command, const util::Env& env,
                                         const util::Clock& clock);

}  // namespace ddprun::agent
