#pragma once
// Chooses and builds the rendezvous of a launch, with the stores it needs:
//   - one node (--standalone, or --nnodes 1 without a c10d endpoint): LocalRendezvous, and the
//     agent hosts the workers' store (TORCHELASTIC_USE_AGENT_STORE=True) unless --agent-store off;
//   - several nodes (static or c10d): the dynamic rendezvous over a network store that one
//     agent hosts (static: node 0 at --master-addr:--master-port; c10d: the agent on the
//     --rdzv-endpoint host that binds first);
//   - etcd-v3: the same dynamic rendezvous with its keys in the etcd cluster (rdzv::EtcdRun:
//     this agent's lease and the run's generation); no agent hosts a rendezvous store.

#include "ddprun/agent/seams.hpp"
#include "ddprun/agent/stack_exchange.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/etcd/client.hpp"
#include "ddprun/rdzv/dynamic_rendezvous.hpp"
#include "ddprun/rdzv/etcd_run.hpp"
#include "ddprun/rdzv/store_kv.hpp"
#include "ddprun/store/server.hpp"
#include "ddprun/util/clock.hpp"

#include <memory>
#include <vector>

namespace ddprun::app {

struct RendezvousSetup {
  std::unique_ptr<etcd::Client> etcd;       ///< etcd-v3 only (declared first: outlives the rest)
  std::unique_ptr<rdzv::EtcdRun> etcd_run;  ///< etcd-v3: this agent's lease and generation
  std::unique_ptr<store::Server> server;    ///< the store this agent hosts, if any
  std::unique_ptr<rdzv::StoreKv> kv;
  std::shared_ptr<rdzv::DynamicRendezvous> dyn;
  std::unique_ptr<agent::Rendezvous> rdzv;
  agent::StackExchange* peers = nullptr;  ///< rdzv's other nodes, for hang reports (null: alone)
};

/// Throws Fatal when a store cannot be hosted, or (etcd-v3) when no etcd member answered
/// within the join timeout (exit 1) or the TLS/auth files are unusable (exit 2). `env` supplies the
/// rendezvous token (DDPRUN_RDZV_TOKEN, the job's token file). With cfg.port_candidates (the store
/// port derived from the job id) the host binds the first free one, the others find it; cfg's port
/// is then set to the one in use.
RendezvousSetup make_rendezvous(asio::io_context& ctx, config::LaunchConfig& cfg,
                                const util::Env& env, const util::Clock& clock);

/// True when the job is this one agent alone.
bool is_single_node(const config::LaunchConfig& cfg);

}  // namespace ddprun::app
