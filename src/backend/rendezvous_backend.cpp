// The factory of rendezvous backends and what they share: the token, this node's
// description, the wiring of a dynamic rendezvous into the supervisor's and reporter's hooks.

#include "ddprun/config/backends.hpp"
#include "ddprun/config/rendezvous_policy.hpp"
#include "ddprun/host/facts.hpp"
#include "ddprun/host/names.hpp"
#include "ddprun/store/token.hpp"
#include "ddprun/util/fatal.hpp"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include "backends.hpp"

namespace ddprun::backend {

Error hosting_error(const std::string& what, const Error& e) {
  return make_error(ErrorCode::io, "cannot host the " + what + ": " + e.message);
}

std::optional<std::string> rdzv_token(const config::RendezvousPlan& cfg, const util::Env& env) {
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

rdzv::NodeDesc self_desc(const config::RendezvousPlan& cfg, const config::WorkerGroup& group,
                         const config::Endpoint& ep, bool hosting) {
  rdzv::NodeDesc self;
  host::AddrFacts facts;
  facts.local_addr = cfg.local_addr;
  if (facts.local_addr.empty()) {
    facts.route_source = host::route_source_address(ep.host, ep.port);
    facts.name = host::host_name();  // one lookup here; the FQDN only where it is published
    facts.name_resolves = host::resolves(facts.name);
    facts.endpoint = ep.host + ":" + std::to_string(ep.port);
  }
  auto published = host::choose_published_addr(facts);
  if (!published.error.empty()) {
    throw Fatal(make_error(ErrorCode::config, published.error));
  }
  if (!published.info.empty()) {
    spdlog::info("{}", published.info);
  }
  self.addr = published.addr == facts.name ? host::host_fqdn() : published.addr;
  self.pid = getpid();
  self.nproc = group.nproc_per_node;
  self.role = group.role;
  self.is_endpoint_host = hosting;
  if (config::row_of(cfg.rdzv_backend).fixed_nodes) {
    self.node_index = cfg.node_rank;
    return self;
  }
  self.node_index = cfg.node_index;
  self.domain = cfg.domain;
  self.topology = cfg.topology;
  return self;
}

void ElasticParts::observe(const RendezvousBackend::Observers& observers) {
  dyn->keep_alive().set_progress_source(observers.progress);
  dyn->hooks().excluded = [excluded = observers.excluded, self = dyn->self().id()](
                              const rdzv::Exclusion& e) { excluded(e, e.node == self); };
  dyn->hooks().spare_joined = observers.spare;
}

std::unique_ptr<RendezvousBackend> make_rendezvous(asio::io_context& ctx,
                                                   const config::LaunchConfig& cfg,
                                                   const util::Env& env, const util::Clock& clock) {
  if (config::is_single_node(cfg.rdzv)) {
    return make_local_backend(ctx, cfg.rdzv, cfg.group, cfg.host);
  }
  for (const auto& row : k_builders) {
    if (row.backend == cfg.rdzv.rdzv_backend) {
      return row.build(ctx, cfg, env, clock);
    }
  }
  throw Fatal(make_error(
      ErrorCode::internal,
      "no builder for --rdzv-backend " + std::string(config::to_string(cfg.rdzv.rdzv_backend))));
}

}  // namespace ddprun::backend
