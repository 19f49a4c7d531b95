#pragma once
// A launch's rendezvous backend: what one agent needs to meet the others, built by one
// factory (make_rendezvous) and owning everything it built (stores, clients, leases). Each
// backend is one class in its own file:
//   - LocalBackend (local_backend.cpp): one node (--standalone, or --nnodes 1 without a c10d
//     endpoint): LocalRendezvous, and the agent hosts the workers' store
//     (TORCHELASTIC_USE_AGENT_STORE=True) unless --agent-store off;
//   - StoreBackend (store_backend.cpp): several nodes, static or c10d: the dynamic rendezvous
//     over a network store that one agent hosts (static: node 0 at --master-addr:--master-port;
//     c10d: the agent on the --rdzv-endpoint host that binds first);
//   - EtcdBackend (etcd_backend.cpp): etcd-v3: the same dynamic rendezvous with its keys in the
//     etcd cluster (rdzv::EtcdRun: this agent's lease and the run's generation); no agent hosts
//     a rendezvous store.
// A new backend: a config::RdzvBackend value (config/parsers.cpp, the flag table's choices), a
// class here in its own file, one line in make_rendezvous (docs/architecture.md, recipes).

#include "ddprun/agent/seams.hpp"
#include "ddprun/agent/stack_exchange.hpp"
#include "ddprun/backend/notice_keeper.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/rdzv/spares.hpp"
#include "ddprun/rdzv/stall_figures.hpp"
#include "ddprun/rdzv/state.hpp"
#include "ddprun/util/clock.hpp"

#include <functional>
#include <memory>
#include <optional>

namespace ddprun::backend {

class RendezvousBackend {
 public:
  /// When this node's workers last made progress (wall ms), as `ddprun status` shows it.
  using ProgressSource = std::function<std::optional<rdzv::WallMs>()>;
  /// A node was left out of the job; `self`: this one.
  using ExclusionListener = std::function<void(const rdzv::Exclusion&, bool self)>;
  /// This node, a spare, took the place of members of the round it waited for.
  using SpareListener = std::function<void(const rdzv::SpareJoined&)>;
  /// What the agent learns from the rendezvous, and what it tells it.
  struct Observers {
    ProgressSource progress;
    ExclusionListener excluded;
    SpareListener spare;
  };

  virtual ~RendezvousBackend() = default;
  /// The supervisor's seam; lives as long as the backend.
  virtual agent::Rendezvous& rendezvous() = 0;
  /// The other nodes, for a job-wide hang report; null for a node alone.
  virtual agent::StackExchange* peers() { return nullptr; }
  /// Publishes this node's progress and reports left-out nodes and spares taking a place
  /// (backends with peers).
  virtual void observe(const Observers& /*observers*/) {}
  /// With --stall-timeout auto: shares what this node learned with the round's other members
  /// and hands it back their maximum (backends with peers; a node alone keeps its own).
  virtual void share_stall(const rdzv::StallShare& /*share*/) {}
  /// Hands `sink` this agent's death notice now and at every change, for its guardian to act on
  /// if the agent is killed (backends with peers; a node alone has nobody to tell).
  virtual void on_death_notice(const NoticeSink& /*sink*/) {}
};

/// Throws Fatal when a store cannot be hosted, or (etcd-v3) when no etcd member answered
/// within the join timeout (exit 1) or the TLS/auth files are unusable (exit 2). `env` supplies
/// the rendezvous token (DDPRUN_RDZV_TOKEN, the job's token file). With cfg.port_candidates
/// (the store port derived from the job id) the host binds the first free one, the others find
/// it; the rendezvous' messages and a static job's workers get the port in use, while `cfg`
/// stays as resolve() made it.
std::unique_ptr<RendezvousBackend> make_rendezvous(asio::io_context& ctx,
                                                   const config::LaunchConfig& cfg,
                                                   const util::Env& env, const util::Clock& clock);

}  // namespace ddprun::backend
