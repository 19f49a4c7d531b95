#include "rendezvous_setup.hpp"

#include "ddprun/agent/elastic_rendezvous.hpp"
#include "ddprun/agent/local_rendezvous.hpp"
#include "ddprun/config/rendezvous_hint.hpp"
#include "ddprun/host/facts.hpp"
#include "ddprun/net/run_now.hpp"
#include "ddprun/rdzv/etcd_options.hpp"
#include "ddprun/rdzv/state.hpp"
#include "ddprun/rdzv/store_port.hpp"
#include "ddprun/store/token.hpp"
#include "ddprun/util/fatal.hpp"
#include "ddprun/util/strings.hpp"

#include <spdlog/spdlog.h>

#include <unistd.h>

namespace ddprun::app {

namespace {

/// A rendezvous with other nodes: they also answer the job-wide hang report.
void use_elastic(RendezvousSetup& setup, std::unique_ptr<agent::ElasticRendezvous> rdzv) {
  setup.peers = rdzv.get();
  setup.rdzv = std::move(rdzv);
}

Error hosting_error(const std::string& what, const Error& e) {
  return make_error(ErrorCode::io, "cannot host the " + what + ": " + e.message);
}

RendezvousSetup single_node(asio::io_context& ctx, const config::LaunchConfig& cfg) {
  RendezvousSetup setup;
  bool is_static = cfg.rdzv_backend == config::RdzvBackend::static_;
  if (cfg.agent_store == config::AgentStore::off) {
    agent::MasterEndpoint master{
        is_static ? cfg.master_addr : host::host_fqdn(),
        is_static ? cfg.master_port : value_or_throw(host::find_free_port("localhost")), false};
    setup.rdzv = std::make_unique<agent::LocalRendezvous>(ctx, cfg, master);
    return setup;
  }
  setup.server = std::make_unique<store::Server>(ctx);
  std::string addr =
      is_static ? cfg.master_addr : (cfg.local_addr.empty() ? host::host_fqdn() : cfg.local_addr);
  // Only this node's workers connect, as MASTER_ADDR: listen where that name leads.
  std::string bind = is_static ? host::bindable_address(addr) : host::exact_bind_address(addr);
  auto port = static_cast<std::uint16_t>(is_static ? cfg.master_port : 0);
  if (auto ok = setup.server->listen(bind, port); !ok) {
    throw Fatal(hosting_error("workers' store (--master-port " + std::to_string(port) + ")",
                              rdzv::with_port_holder(ok.error(), port)));
  }
  agent::MasterEndpoint master{addr, setup.server->port(), true};
  auto* server = setup.server.get();
  setup.rdzv = std::make_unique<agent::LocalRendezvous>(ctx, cfg, master,
                                                        [server] { server->erase_prefix(""); });
  return setup;
}

config::Endpoint store_endpoint(const config::LaunchConfig& cfg) {
  if (cfg.rdzv_backend == config::RdzvBackend::static_) {
    return {cfg.master_addr, cfg.master_port};
  }
  auto ep = cfg.rdzv_endpoint;
  if (ep.host.empty()) {
    ep.host = "localhost";
  }
  return ep;
}

/// Whether this agent should try to host the rendezvous store, and whether that was asked
/// for explicitly (then a failed bind is an error, not a hint to connect as a client).
std::pair<bool, bool> should_host(const config::LaunchConfig& cfg, const config::Endpoint& ep) {
  if (cfg.rdzv_backend == config::RdzvBackend::static_) {
    return {cfg.node_rank == 0, true};
  }
  if (auto it = cfg.rdzv_conf.find("is_host"); it != cfg.rdzv_conf.end()) {
    return {value_or_throw(util::parse_bool_word(it->second)), true};
  }
  return {host::is_local_host(ep.host), false};
}

/// Where the rendezvous store listens: the endpoint's own address, so two agents on one machine
/// contend for it and only the host's interface is exposed. A name that resolves to loopback
/// here while the job spans nodes (Debian maps its hostname to 127.0.1.1) must still be
/// reachable from the other nodes, so then it listens on every interface.
std::string store_bind_address(const config::LaunchConfig& cfg, const config::Endpoint& ep) {
  auto addr = host::bindable_address(ep.host);
  bool loopback = !addr.empty() && asio::ip::make_address(addr).is_loopback();
  bool remote_peers = cfg.nnodes.max > 1 && !host::is_loopback_name(ep.host);
  return loopback && remote_peers ? "" : addr;
}

struct StoreChoices {
  std::optional<std::string> token;
  std::vector<int> port_candidates;  ///< derived from the job id; empty: the port is given
};

/// The rendezvous token (store/auth.hpp), or nullopt; throws Fatal for a bad token file.
std::optional<std::string> rdzv_token(const config::LaunchConfig& cfg, const util::Env& env) {
  std::optional<store::JobTokenDir> job;
  if (cfg.job) {
    job = store::JobTokenDir{cfg.job->id, cfg.job->submit_dir, cfg.job->submit_dir_var};
  }
  const auto source = store::decide_token_source(cfg.rdzv_conf, env, job);
  auto token = value_or_throw(store::load_token(source));
  if (token) {
    spdlog::info("rendezvous authenticated with the token from {}", source.origin);
  } else {
    spdlog::info(
        "the rendezvous is unauthenticated (no --rdzv_conf token_file, {} or job token file; "
        "see docs/reliability.md, Security)",
        store::k_token_env);
  }
  return token;
}

/// Listens on ep.port, or on the first free derived port (then ep.port becomes it).
Result<void> listen_for_rendezvous(store::Server& server, const config::LaunchConfig& cfg,
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

std::unique_ptr<store::Server> host_store(asio::io_context& ctx, const config::LaunchConfig& cfg,
                                          config::Endpoint& ep, const StoreChoices& choices) {
  auto [host, explicit_host] = should_host(cfg, ep);
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
  if (explicit_host && cfg.rdzv_backend == config::RdzvBackend::static_) {
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
void find_derived_port(const config::LaunchConfig& cfg, config::Endpoint& ep,
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

/// Workers and messages use the port actually chosen.
void record_port(config::LaunchConfig& cfg, int port) {
  if (cfg.rdzv_backend == config::RdzvBackend::static_) {
    cfg.master_port = port;
  } else {
    cfg.rdzv_endpoint.port = port;
  }
}

rdzv::NodeDesc self_desc(const config::LaunchConfig& cfg, const config::Endpoint& ep,
                         bool hosting) {
  rdzv::NodeDesc self;
  self.addr = cfg.local_addr;
  if (self.addr.empty()) {
    self.addr = host::route_source_address(ep.host, ep.port);
  }
  if (self.addr.empty()) {
    self.addr = host::host_fqdn();
  }
  self.pid = getpid();
  self.nproc = cfg.nproc_per_node;
  self.role = cfg.role;
  self.is_endpoint_host = hosting;
  if (cfg.rdzv_backend == config::RdzvBackend::static_) {
    self.node_index = cfg.node_rank;
  } else if (cfg.node_index) {
    self.node_index = *cfg.node_index;
  }
  return self;
}

RendezvousSetup multi_node(asio::io_context& ctx, config::LaunchConfig& cfg, const util::Env& env,
                           const util::Clock& clock) {
  RendezvousSetup setup;
  auto ep = store_endpoint(cfg);
  auto settings = cfg.rdzv_settings;
  const auto port_candidates = cfg.port_candidates;
  const StoreChoices choices{rdzv_token(cfg, env), port_candidates};
  setup.server = host_store(ctx, cfg, ep, choices);
  store::ClientOptions options;
  store::use_rdzv_auth(options, choices.token);
  options.host = ep.host;
  options.connect_timeout = settings.join_timeout;
  options.op_timeout = settings.read_timeout;
  if (!setup.server) {
    find_derived_port(cfg, ep, port_candidates, options);
  }
  options.port = static_cast<std::uint16_t>(ep.port);
  if (!setup.server && port_candidates.empty()) {
    refuse_foreign_listener(ep, options, rdzv::host_marker_key(cfg.rdzv_id));
  }
  record_port(cfg, ep.port);
  settings.incomplete_hint = config::render_rendezvous_hint(cfg, host::is_loopback_name(ep.host));
  setup.kv = std::make_unique<rdzv::StoreKv>(ctx, options);
  auto self = self_desc(cfg, ep, setup.server != nullptr);
  setup.dyn = rdzv::DynamicRendezvous::create(ctx, *setup.kv, settings, self, clock);
  agent::ElasticOptions elastic;
  elastic.is_static = cfg.rdzv_backend == config::RdzvBackend::static_;
  elastic.advertise_addr = self.addr;
  use_elastic(setup, std::make_unique<agent::ElasticRendezvous>(
                         ctx, cfg, setup.dyn, setup.server.get(), setup.kv.get(), elastic));
  return setup;
}

/// The lease on this agent's own keys lasts the keep-alive bound (interval x attempts), the
/// time after which the rendezvous counts a silent node as dead anyway.
std::chrono::seconds etcd_lease_ttl(const rdzv::RdzvSettings& s) {
  const auto bound = std::chrono::ceil<std::chrono::seconds>(rdzv::keep_alive_bound(s));
  return std::max(bound, std::chrono::seconds(3));
}

RendezvousSetup etcd_node(asio::io_context& ctx, config::LaunchConfig& cfg, const util::Env& env,
                          const util::Clock& clock) {
  RendezvousSetup setup;
  auto settings = cfg.rdzv_settings;
  auto client = etcd::Client::make(ctx, value_or_throw(rdzv::etcd_client_options(cfg.etcd)));
  if (!client) {
    throw Fatal(make_error(client.error().code, "etcd-v3 rendezvous: " + client.error().message));
  }
  setup.etcd = std::move(*client);
  const config::Endpoint first = cfg.rdzv_endpoint;
  auto self = self_desc(cfg, first, false);
  rdzv::EtcdRunOptions run;
  run.key_prefix = cfg.etcd.key_prefix;
  run.run_id = cfg.rdzv_id;
  run.node_id = self.id();
  run.lease_ttl = etcd_lease_ttl(settings);
  run.deadline = settings.join_timeout;
  run.token = rdzv_token(cfg, env);
  run.liveness_wait = rdzv::keep_alive_bound(settings) + settings.keep_alive_interval;
  auto opened = net::run_now(ctx, rdzv::EtcdRun::open(*setup.etcd, std::move(run)));
  if (!opened) {
    throw Fatal(opened.error());
  }
  setup.etcd_run = std::move(*opened);
  settings.incomplete_hint =
      config::render_rendezvous_hint(cfg, host::is_loopback_name(first.host));
  setup.dyn = rdzv::DynamicRendezvous::create(ctx, setup.etcd_run->kv(), settings, self, clock);
  agent::ElasticOptions elastic;
  elastic.advertise_addr = self.addr;
  auto* etcd_run = setup.etcd_run.get();
  elastic.finish = [etcd_run](bool job_ended) -> asio::awaitable<void> {
    co_await etcd_run->finish(job_ended ? rdzv::EtcdRun::Leaving::job_ended
                                        : rdzv::EtcdRun::Leaving::node_only);
  };
  use_elastic(setup, std::make_unique<agent::ElasticRendezvous>(ctx, cfg, setup.dyn, nullptr,
                                                                nullptr, elastic));
  return setup;
}

}  // namespace

bool is_single_node(const config::LaunchConfig& cfg) {
  if (cfg.rdzv_backend == config::RdzvBackend::etcd_v3) {
    return false;  // the rendezvous is in etcd even for one node
  }
  // One node with c10d on port 0 (torchtitan's `--rdzv_endpoint localhost:0`) is what
  // --standalone is: the agent hosts the store on a free port.
  return cfg.standalone ||
         (cfg.nnodes.max == 1 && (cfg.rdzv_backend == config::RdzvBackend::static_ ||
                                  cfg.rdzv_endpoint.host.empty() || cfg.rdzv_endpoint.port == 0));
}

RendezvousSetup make_rendezvous(asio::io_context& ctx, config::LaunchConfig& cfg,
                                const util::Env& env, const util::Clock& clock) {
  if (cfg.rdzv_backend == config::RdzvBackend::etcd_v3) {
    return etcd_node(ctx, cfg, env, clock);
  }
  return is_single_node(cfg) ? single_node(ctx, cfg) : multi_node(ctx, cfg, env, clock);
}

}  // namespace ddprun::app
