#pragma once
// Chooses and builds the rendezvous of a launch, with the stores it needs:
//   - one node (--standalone, or --nnodes 1 without a c10d endpoint): LocalRendezvous, and the
//     agent hosts the workers' store (TORCHELASTIC_USE_AGENT_STORE=True) unless --agent-store off;
//   - several nodes (static or c10d): the dynamic rendezvous over a network store that one
//     agent hosts (static: node 0 at --master-addr:--master-port; c10d: the agent on the
//     --rdzv-endpoint host that binds first).

#include "ddprun/agent/seams.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/rdzv/handler.hpp"
#include "ddprun/rdzv/store_kv.hpp"
#include "ddprun/store/server.hpp"
#include "ddprun/util/clock.hpp"

#include <memory>
#include <vector>

namespace ddprun::app {

struct RendezvousSetup {
  std::unique_ptr<store::Server> server;  ///< the store this agent hosts, if any
  std::unique_ptr<rdzv::StoreKv> kv;
  std::shared_ptr<rdzv::DynamicRendezvous> dyn;
  std::unique_ptr<agent::Rendezvous> rdzv;
};

/// Throws Fatal when a store cannot be hosted. `env` supplies the rendezvous token
/// (DDPRUN_RDZV_TOKEN, the job's token file). With cfg.port_candidates (the store port derived
/// from the job id) the host binds the first free one, the others find it; cfg's port is then
/// set to the one in use.
RendezvousSetup make_rendezvous(asio::io_context& ctx, config::LaunchConfig& cfg,
                                const util::Env& env, const util::Clock& clock);

/// True when the job is this one agent alone.
bool is_single_node(const config::LaunchConfig& cfg);

}  // namespace ddprun::app
