#pragma once
// What the rendezvous backends (local_backend.cpp, store_backend.cpp, etcd_backend.cpp) share,
// and their builders, which make_rendezvous (rendezvous_backend.cpp) chooses between.

#include "ddprun/agent/elastic_rendezvous.hpp"
#include "ddprun/backend/rendezvous_backend.hpp"
#include "ddprun/rdzv/dynamic_rendezvous.hpp"
#include "ddprun/util/result.hpp"

#include <memory>
#include <optional>
#include <string>

namespace ddprun::backend {

/// "cannot host the WHAT: why".
Error hosting_error(const std::string& what, const Error& e);

/// The rendezvous token (store/auth.hpp), or nullopt; throws Fatal for a bad token file.
std::optional<std::string> rdzv_token(const config::RendezvousPlan& cfg, const util::Env& env);

/// This agent as the others see it; `ep` is where the rendezvous is (its route picks the
/// address), `hosting` whether this agent hosts the rendezvous store.
rdzv::NodeDesc self_desc(const config::RendezvousPlan& cfg, const config::WorkerGroup& group,
                         const config::Endpoint& ep, bool hosting);

/// The dynamic rendezvous and the agent's view of it, as both multi-node backends hold them
/// (declared after what they use: destroyed first).
struct ElasticParts {
  std::shared_ptr<rdzv::DynamicRendezvous> dyn;
  std::unique_ptr<agent::ElasticRendezvous> rdzv;

  void observe(const RendezvousBackend::Observers& observers);
  void share_stall(const rdzv::StallShare& share) const {
    dyn->keep_alive().set_stall_share(share);
  }
};

/// What a multi-node backend forwards to its ElasticParts, written once: the store and etcd-v3
/// backends derive from it and say where their parts are (declared after what they use).
class ElasticBackend : public RendezvousBackend {
 public:
  agent::Rendezvous& rendezvous() override { return *parts().rdzv; }
  agent::StackExchange* peers() override { return parts().rdzv.get(); }
  void observe(const Observers& observers) override { parts().observe(observers); }
  void share_stall(const rdzv::StallShare& share) override { parts().share_stall(share); }
  void on_death_notice(const NoticeSink& sink) override { notice_.set_sink(sink); }

 protected:
  virtual ElasticParts& parts() = 0;
  NoticeKeeper notice_;  ///< a base member: destroyed after everything the backend built
};

/// `host`'s torchrun flavor decides whether a single-node c10d job's workers use the agent's
/// store (--agent-store auto).
std::unique_ptr<RendezvousBackend> make_local_backend(asio::io_context& ctx,
                                                      const config::RendezvousPlan& cfg,
                                                      const config::WorkerGroup& group,
                                                      const config::HostPlan& host);
std::unique_ptr<RendezvousBackend> make_store_backend(asio::io_context& ctx,
                                                      const config::LaunchConfig& cfg,
                                                      const util::Env& env,
                                                      const util::Clock& clock);
std::unique_ptr<RendezvousBackend> make_etcd_backend(asio::io_context& ctx,
                                                     const config::LaunchConfig& cfg,
                                                     const util::Env& env,
                                                     const util::Clock& clock);

/// A multi-node backend's builder.
using BackendBuilder = std::unique_ptr<RendezvousBackend> (*)(asio::io_context&,
                                                              const config::LaunchConfig&,
                                                              const util::Env&, const util::Clock&);
struct BuilderRow {
  config::RdzvBackend backend;
  BackendBuilder build;
};
/// Which builder each backend's row leads to (make_rendezvous; a one-node job that may skip
/// the shared rendezvous gets the local backend instead): a new backend adds its row here.
inline constexpr BuilderRow k_builders[] = {
    {config::RdzvBackend::static_, &make_store_backend},
    {config::RdzvBackend::c10d, &make_store_backend},
    {config::RdzvBackend::etcd_v3, &make_etcd_backend},
};

}  // namespace ddprun::backend
