// A node alone: LocalRendezvous, and the workers' store this agent hosts for them (torchrun's
// agent store, TORCHELASTIC_USE_AGENT_STORE=True) unless --agent-store off, or a single-node
// c10d job under --agent-store auto whose workers' torch is older than 2.4 (its torchrun's
// way: config/torchrun_flavor.hpp), when the workers' rank 0 hosts it at
// MASTER_ADDR:MASTER_PORT as under torchrun without the agent store.

#include "ddprun/agent/local_rendezvous.hpp"
#include "ddprun/config/backends.hpp"
#include "ddprun/host/facts.hpp"
#include "ddprun/rdzv/store_port.hpp"
#include "ddprun/store/server.hpp"
#include "ddprun/util/fatal.hpp"

#include "backends.hpp"

namespace ddprun::backend {

namespace {

/// MASTER_ADDR of a one-node c10d job: loopback, as torch >= 2.6 gives it, never the host's
/// name (which need not resolve: containers, hosts without DNS).
constexpr std::string_view k_one_node_addr = "localhost";

class LocalBackend final : public RendezvousBackend {
 public:
  LocalBackend(asio::io_context& ctx, const config::RendezvousPlan& cfg,
               const config::WorkerGroup& group, const config::HostPlan& host) {
    // static: the workers' store is the one at --master-addr:--master-port.
    const bool is_static =
        config::row_of(cfg.rdzv_backend).store_host == config::StoreHost::node_rank_zero;
    const bool workers_host = cfg.agent_store == config::AgentStore::off ||
                              (cfg.agent_store == config::AgentStore::automatic && !is_static &&
                               !host.torchrun.one_node_agent_store);
    if (workers_host) {
      agent::MasterEndpoint master{
          is_static ? cfg.master_addr : std::string(k_one_node_addr),
          is_static ? cfg.master_port : value_or_throw(host::find_free_port("localhost")), false};
      rdzv_ = std::make_unique<agent::LocalRendezvous>(ctx, cfg, group, master);
      return;
    }
    server_ = std::make_unique<store::Server>(ctx);
    std::string addr =
        is_static ? cfg.master_addr
                  : (cfg.local_addr.empty() ? std::string(k_one_node_addr) : cfg.local_addr);
    // Only this node's workers connect, as MASTER_ADDR: listen where that name leads.
    std::string bind = is_static ? host::bindable_address(addr) : host::exact_bind_address(addr);
    auto port = static_cast<std::uint16_t>(is_static ? cfg.master_port : 0);
    if (auto ok = server_->listen(bind, port); !ok) {
      throw Fatal(hosting_error("workers' store (--master-port " + std::to_string(port) + ")",
                                rdzv::with_port_holder(ok.error(), port)));
    }
    agent::MasterEndpoint master{addr, server_->port(), true};
    auto* server = server_.get();
    rdzv_ = std::make_unique<agent::LocalRendezvous>(ctx, cfg, group, master,
                                                     [server] { server->erase_prefix(""); });
  }

  agent::Rendezvous& rendezvous() override { return *rdzv_; }

 private:
  std::unique_ptr<store::Server> server_;  ///< the workers' store; null with --agent-store off
  std::unique_ptr<agent::Rendezvous> rdzv_;
};

}  // namespace

std::unique_ptr<RendezvousBackend> make_local_backend(asio::io_context& ctx,
                                                      const config::RendezvousPlan& cfg,
                                                      const config::WorkerGroup& group,
                                                      const config::HostPlan& host) {
  return std::make_unique<LocalBackend>(ctx, cfg, group, host);
}

}  // namespace ddprun::backend
