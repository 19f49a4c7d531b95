// Static and c10d: the dynamic rendezvous over a TCPStore that one agent hosts (static: node 0
// at --master-addr:--master-port; c10d: the agent on the --rdzv-endpoint host that binds
// first, or the one given --rdzv-conf is_host=true); the others join it as clients.

#include "ddprun/config/backends.hpp"
#include "ddprun/config/rendezvous_hint.hpp"
#include "ddprun/config/rendezvous_policy.hpp"
#include "ddprun/host/facts.hpp"
#include "ddprun/rdzv/store_kv.hpp"
#include "ddprun/rdzv/store_port.hpp"
#include "ddprun/store/server.hpp"
#include "ddprun/store/token.hpp"
#include "ddprun/util/fatal.hpp"
#include "ddprun/util/strings.hpp"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include "backends.hpp"
#include "store_duties.hpp"

namespace ddprun::backend {

namespace {

/// Where the rendezvous store listens: the endpoint's own address, so two agents on one machine
/// contend for it and only the host's interface is exposed, unless the other nodes could not
/// reach that address (config::listens_everywhere): then every interface.
std::string store_bind_address(const config::RendezvousPlan& cfg, const config::Endpoint& ep) {
  auto addr = host::bindable_address(ep.host);
  const bool loopback = !addr.empty() && asio::ip::make_address(addr).is_loopback();
  return config::listens_everywhere(cfg, loopback, host::is_loopback_name(ep.host)) ? "" : addr;
}

struct StoreChoices {
  std::optional<std::string> token;
  std::vector<int> port_candidates;  ///< derived from the job id; empty: the port is given
};

/// Listens on ep.port, or on the first free derived port (then ep.port becomes it).
Result<void> listen_for_rendezvous(store::Server& server, const config::RendezvousPlan& cfg,
                                   config::Endpoint& ep, const std::vector<int>& candidates) {
  const auto bind = store_bind_address(cfg, ep);
  if (candidates.empty()) {
    return server.listen(bind, static_cast<std::uint16_t>(ep.port));
  }
  auto port = rdzv::listen_on_first_free(server, bind, ep.host, candidates);
  if (!port) {
    return port.error();
  }
  ep.port = *port;
  return {};
}

/// "127.0.0.1:29400 (held by pid 6148 (python3))": the holder when this machine shows one.
std::string endpoint_with_holder(const config::Endpoint& ep,
                                 const std::optional<rdzv::PortHolder>& holder) {
  const std::string where = ep.host + ":" + std::to_string(ep.port);
  return holder && holder->pid != 0 ? where + " (" + describe(*holder) + ")" : where;
}

/// The store endpoint this agent joins as a client must speak the agents' protocol: a program
/// that accepts and does not (a web server, a closed-at-once socket, an old TCPStore) is one
/// error now rather than a wait for the join timeout. A real TCPStore is used as it is.
void refuse_foreign_listener(const config::Endpoint& ep, const store::ClientOptions& options,
                             const std::string& key) {
  const auto check = rdzv::check_endpoint(options, key);
  const auto holder = rdzv::find_port_holder(ep.port);  // /proc is read once
  const std::string flag = "the rendezvous store endpoint " + endpoint_with_holder(ep, holder);
  if (check.answer == rdzv::EndpointAnswer::not_a_store) {
    throw Fatal(make_error(ErrorCode::protocol, flag + " is not a TCPStore: " + check.why +
                                                    "; free the port or pick another one"));
  }
  if (check.answer == rdzv::EndpointAnswer::old_store) {
    throw Fatal(make_error(
        ErrorCode::protocol,
        flag + " is a TCPStore of PyTorch 2.1 or older (dialect " + check.why +
            "); ddprun agents rendezvous in the protocol of PyTorch 2.2 and newer: leave the "
            "port free so that an agent hosts the store"));
  }
  if (check.answer == rdzv::EndpointAnswer::store && holder) {
    spdlog::info("{} answers as a TCPStore; this agent joins it as a client",
                 endpoint_with_holder(ep, holder));
  }
}

std::unique_ptr<store::Server> host_store(asio::io_context& ctx, const config::RendezvousPlan& cfg,
                                          config::Endpoint& ep, const StoreChoices& choices) {
  const auto [host, explicit_host] = config::hosting_choice(cfg, host::is_local_host(ep.host));
  if (!host) {
    return nullptr;
  }
  store::ServerOptions options;
  options.token = choices.token.value_or(std::string());
  auto server = std::make_unique<store::Server>(ctx, options);
  auto ok = listen_for_rendezvous(*server, cfg, ep, choices.port_candidates);
  if (!ok && choices.port_candidates.empty()) {
    ok = rdzv::with_port_holder(ok.error(), ep.port);
  }
  if (ok) {
    spdlog::info("hosting the rendezvous store on {}:{}", ep.host, server->port());
    server->set_local(rdzv::host_marker_key(cfg.rdzv_id),
                      ep.host + " pid " + std::to_string(getpid()));
    return server;
  }
  if (explicit_host &&
      config::row_of(cfg.rdzv_backend).store_host == config::StoreHost::node_rank_zero) {
    throw Fatal(
        hosting_error("rendezvous store as --node-rank 0 (is another agent also "
                      "--node-rank 0, or another program on --master-port?)",
                      ok.error()));
  }
  if (explicit_host) {
    throw Fatal(hosting_error("rendezvous store", ok.error()));
  }
  spdlog::info("another agent hosts {}:{} ({}); joining as a client", ep.host, ep.port,
               ok.error().message);
  return nullptr;
}

/// A client of a derived-port store finds the candidate its host bound.
void find_derived_port(const config::RendezvousPlan& cfg, config::Endpoint& ep,
                       const std::vector<int>& candidates, const store::ClientOptions& options) {
  if (candidates.empty()) {
    return;
  }
  auto port = rdzv::find_store_port(ep.host, candidates, rdzv::host_marker_key(cfg.rdzv_id),
                                    options, options.connect_timeout);
  if (!port) {
    throw Fatal(make_error(port.error().code, "rendezvous store: " + port.error().message));
  }
  spdlog::info("the rendezvous store answers on derived port {}", *port);
  ep.port = *port;
}

/// What this agent's guardian tells the store if the agent is killed.
rdzv::DeathNotice store_notice(const config::RendezvousPlan& cfg, const config::Endpoint& ep,
                               const std::optional<std::string>& token, std::string node_id) {
  rdzv::DeathNotice n;
  n.run_id = cfg.rdzv_id;
  n.node_id = std::move(node_id);
  n.token = token;
  n.host = ep.host;
  n.port = ep.port;
  return n;
}

class StoreBackend final : public ElasticBackend {
 public:
  StoreBackend(asio::io_context& ctx, const config::LaunchConfig& cfg, const util::Env& env,
               const util::Clock& clock) {
    auto ep = config::store_endpoint(cfg.rdzv);
    auto settings = cfg.rdzv.rdzv_settings;
    const auto port_candidates = cfg.rdzv.port_candidates;
    const StoreChoices choices{rdzv_token(cfg.rdzv, env), port_candidates};
    server_ = host_store(ctx, cfg.rdzv, ep, choices);
    store::ClientOptions options;
    store::use_rdzv_auth(options, choices.token);
    options.host = ep.host;
    options.connect_timeout = settings.join_timeout;
    options.op_timeout = settings.read_timeout;
    if (!server_) {
      find_derived_port(cfg.rdzv, ep, port_candidates, options);
    }
    options.port = static_cast<std::uint16_t>(ep.port);
    if (!server_ && port_candidates.empty()) {
      refuse_foreign_listener(ep, options, rdzv::host_marker_key(cfg.rdzv.rdzv_id));
    }
    settings.incomplete_hint =
        config::render_rendezvous_hint(cfg, ep, host::is_loopback_name(ep.host));
    kv_ = std::make_unique<rdzv::StoreKv>(ctx, options);
    auto self = self_desc(cfg.rdzv, cfg.group, ep, server_ != nullptr);
    parts_.dyn = rdzv::DynamicRendezvous::create(ctx, *kv_, settings, self, clock);
    agent::ElasticOptions elastic;
    elastic.is_static = config::row_of(cfg.rdzv.rdzv_backend).fixed_nodes;
    elastic.store = ep;  // the port bound or found, which a derived port knows only now
    elastic.advertise_addr = self.addr;
    notice_.reset(store_notice(cfg.rdzv, ep, choices.token, self.id()));
    elastic.on_round = [this](std::optional<int> round) { notice_.set_round(round); };
    elastic.on_done = [this] { notice_.set_done(); };
    stores_ = std::make_unique<TcpStoreDuties>(ctx, server_.get(), kv_.get());
    parts_.rdzv = std::make_unique<agent::ElasticRendezvous>(ctx, cfg.rdzv, cfg.group, parts_.dyn,
                                                             *stores_, elastic);
  }

 private:
  ElasticParts& parts() override { return parts_; }
  std::unique_ptr<store::Server> server_;   ///< the rendezvous store, when this agent hosts it
  std::unique_ptr<rdzv::StoreKv> kv_;       ///< this agent's client of it
  std::unique_ptr<TcpStoreDuties> stores_;  ///< both, for the rendezvous
  ElasticParts parts_;
};

}  // namespace

std::unique_ptr<RendezvousBackend> make_store_backend(asio::io_context& ctx,
                                                      const config::LaunchConfig& cfg,
                                                      const util::Env& env,
                                                      const util::Clock& clock) {
  return std::make_unique<StoreBackend>(ctx, cfg, env, clock);
}

}  // namespace ddprun::backend
