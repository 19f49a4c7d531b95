// config::resolve's rendezvous part (resolver.hpp): the backend and its endpoint, --rdzv-conf,
// the static backend's node flags, --local-addr, the rendezvous and crash-loop settings. Where
// backends differ, their rows (backends.hpp) say how.

#include "ddprun/config/backends.hpp"
#include "ddprun/config/rdzv_conf.hpp"
#include "ddprun/config/rendezvous_policy.hpp"
#include "ddprun/util/default_ports.hpp"

#include <utility>

#include "resolver.hpp"

namespace ddprun::config::detail {

Result<void> Resolver::rendezvous() {
  cfg_.rdzv.standalone = on(flag::k_standalone);
  cfg_.rdzv.rdzv_id = text(flag::k_rdzv_id);
  std::string endpoint_text = text(flag::k_rdzv_endpoint);
  std::string forced = "forced by --standalone";
  auto backend = parse_rdzv_backend(cfg_.rdzv.standalone ? "c10d" : text(flag::k_rdzv_backend));
  if (cfg_.rdzv.standalone) {
    endpoint_text = "localhost:0";
    cfg_.rdzv.rdzv_id = host_.random_run_id;
    note(flag::k_standalone, "true");
  }
  if (!backend) {
    return named(flag::k_rdzv_backend, backend.error());
  }
  cfg_.rdzv.rdzv_backend = *backend;
  note(flag::k_rdzv_backend, std::string(to_string(cfg_.rdzv.rdzv_backend)),
       cfg_.rdzv.standalone ? forced : origin_of(flag::k_rdzv_backend));
  note(flag::k_rdzv_id, cfg_.rdzv.rdzv_id,
       cfg_.rdzv.standalone ? forced : origin_of(flag::k_rdzv_id));
  auto conf = read_rdzv_conf(text(flag::k_rdzv_conf), to_string(cfg_.rdzv.rdzv_backend));
  if (!conf) {
    return named(flag::k_rdzv_conf, conf.error());
  }
  cfg_.rdzv.rdzv_conf = conf->pairs;
  for (const auto& line : conf->warnings) {
    warn(flag::k_rdzv_conf, line);
  }
  note(flag::k_rdzv_conf, text(flag::k_rdzv_conf));
  auto ok = row_of(cfg_.rdzv.rdzv_backend).endpoint_is_members
                ? etcd_endpoints(endpoint_text)
                : store_endpoint(endpoint_text, forced);
  if (!ok) {
    return ok.error();
  }
  return static_node();
}

Result<void> Resolver::store_endpoint(const std::string& endpoint_text, const std::string& forced) {
  auto ep = parse_endpoint(endpoint_text, util::k_default_c10d_port);
  if (!ep) {
    return named(flag::k_rdzv_endpoint, ep.error());
  }
  cfg_.rdzv.rdzv_endpoint = *ep;
  if (endpoint_text.empty()) {
    cfg_.rdzv.rdzv_endpoint.host.clear();
  }
  // Port 0: the agent hosts the store on a free port (one node, as torchrun does); the other
  // nodes of a larger job could never learn which.
  if (ep->port == 0 && !cfg_.rdzv.standalone &&
      row_of(cfg_.rdzv.rdzv_backend).store_host == StoreHost::endpoint &&
      cfg_.rdzv.nnodes.max > 1) {
    return bad(flag::k_rdzv_endpoint,
               "a port the other nodes can reach: port 0 (a free port) works for one node only, "
               "not for --nnodes " +
                   text(flag::k_nnodes));
  }
  note(flag::k_rdzv_endpoint, endpoint_text,
       cfg_.rdzv.standalone ? forced : origin_of(flag::k_rdzv_endpoint));
  return {};
}

// etcd-v3: --rdzv-endpoint lists the members; rdzv_endpoint keeps the first for messages.
Result<void> Resolver::etcd_endpoints(const std::string& endpoint_text) {
  auto etcd = read_etcd_conf(cfg_.rdzv.rdzv_conf);
  if (!etcd) {
    return bad(flag::k_rdzv_conf, etcd.error().message);
  }
  cfg_.rdzv.etcd = std::move(*etcd);
  auto eps = parse_etcd_members(endpoint_text, cfg_.rdzv.etcd.tls);
  if (!eps) {
    return named(flag::k_rdzv_endpoint, eps.error());
  }
  cfg_.rdzv.etcd.endpoints = std::move(*eps);
  const auto& first = cfg_.rdzv.etcd.endpoints.front();
  cfg_.rdzv.rdzv_endpoint = Endpoint{first.host, first.port};
  note(flag::k_rdzv_endpoint, endpoint_text, origin_of(flag::k_rdzv_endpoint));
  note("etcd_key_prefix", cfg_.rdzv.etcd.key_prefix + "/" + cfg_.rdzv.rdzv_id + "/",
       cfg_.rdzv.rdzv_conf.count("key_prefix") != 0 ? "--rdzv-conf key_prefix" : "default");
  return {};
}

// --node-rank, --master-addr and --master-port belong to the static backend; c10d (and so
// --standalone) ignores them in torchrun, which ddprun says when the user set one.
Result<void> Resolver::static_node() {
  const bool is_static = row_of(cfg_.rdzv.rdzv_backend).fixed_nodes;
  auto rank = int_in(flag::k_node_rank, is_static ? 0 : k_int_min, is_static ? 1 << 20 : k_int_max,
                     is_static ? "a non-negative integer" : "an integer");
  if (!rank) {
    return rank.error();
  }
  if (is_static && *rank >= cfg_.rdzv.nnodes.max) {
    return bad(flag::k_node_rank,
               "a node rank below --nnodes (" + std::to_string(cfg_.rdzv.nnodes.max) + ")");
  }
  cfg_.rdzv.node_rank = is_static ? *rank : 0;
  note(flag::k_node_rank, text(flag::k_node_rank));
  auto port = int_in(flag::k_master_port, is_static ? 0 : k_int_min, is_static ? 65535 : k_int_max,
                     is_static ? "a port number 0-65535" : "an integer");
  if (!port) {
    return port.error();
  }
  cfg_.rdzv.master_addr = text(flag::k_master_addr);
  if (is_static && !is_host_text(cfg_.rdzv.master_addr)) {
    return bad(flag::k_master_addr, "a host name or address");
  }
  cfg_.rdzv.master_port = *port;
  note(flag::k_master_addr, cfg_.rdzv.master_addr);
  note(flag::k_master_port, std::to_string(cfg_.rdzv.master_port));
  if (!is_static) {
    warn_if_set(flag::k_node_rank, text(flag::k_node_rank) != "0",
                "ranks come from the rendezvous");
    for (auto dest : {flag::k_master_addr, flag::k_master_port}) {
      warn_if_set(dest, true, "the rendezvous is at --rdzv-endpoint");
    }
  }
  return local_addr();
}

void Resolver::warn_if_set(FlagKey dest, bool matters, const std::string& why) {
  const auto origin = at(dest).origin;
  if (matters && (origin == cli::Origin::flag || origin == cli::Origin::env)) {
    warn(dest, quoted(text(dest)) + ": ignored, not used by the " +
                   std::string(to_string(cfg_.rdzv.rdzv_backend)) + " backend: " + why);
  }
}

Result<void> Resolver::local_addr() {
  cfg_.rdzv.local_addr = text(flag::k_local_addr);
  if (!cfg_.rdzv.local_addr.empty() && !is_host_text(cfg_.rdzv.local_addr)) {
    return bad(flag::k_local_addr, "a host name or address");
  }
  note(flag::k_local_addr, cfg_.rdzv.local_addr);
  return {};
}

// The dynamic rendezvous' settings, checked for single-node jobs too (which use none of them)
// so that a bad --rdzv-conf stops the launch before anything is started. The static backend
// needs every node (min = max), keeps node indices unique and waits torchrun's static timeout.
Result<void> Resolver::rdzv_settings() {
  const bool is_static = row_of(cfg_.rdzv.rdzv_backend).fixed_nodes;
  const int min = is_static ? cfg_.rdzv.nnodes.max : cfg_.rdzv.nnodes.min;
  auto settings =
      rdzv::parse_rdzv_settings(cfg_.rdzv.rdzv_conf, cfg_.rdzv.rdzv_id, min, cfg_.rdzv.nnodes.max);
  if (!settings) {
    return make_error(ErrorCode::usage,
                      source_of(cfg_, "rdzv_conf") + ": " + settings.error().message);
  }
  cfg_.rdzv.rdzv_settings = *settings;
  if (!is_static) {
    return check_is_host();
  }
  cfg_.rdzv.rdzv_settings.unique_node_index = true;  // node_index is --node-rank
  cfg_.rdzv.rdzv_settings.join_timeout = k_static_join_timeout;
  auto it = cfg_.rdzv.rdzv_conf.find("timeout");
  if (it == cfg_.rdzv.rdzv_conf.end()) {
    return {};
  }
  auto secs = util::parse_int_in(it->second, 1, 1 << 30);
  if (!secs) {
    return make_error(ErrorCode::usage, source_of(cfg_, "rdzv_conf") + " timeout " +
                                            quoted(it->second) +
                                            ": expected a positive whole number of seconds");
  }
  cfg_.rdzv.rdzv_settings.join_timeout = std::chrono::seconds(*secs);
  return {};
}

// c10d's is_host (torchrun: bool of the text) is read when the store is hosted; a bad value
// must stop the launch here, before the guardian, the run directory or a store exist.
Result<void> Resolver::check_is_host() const {
  if (auto is_host = read_is_host(cfg_.rdzv); !is_host) {
    return make_error(ErrorCode::usage,
                      source_of(cfg_, "rdzv_conf") + " " + is_host.error().message);
  }
  return {};
}

// After rdzv_settings(): the crash-loop bounds travel with the rendezvous settings, which both
// the rendezvous that decides (the header's streak) and a node alone (LocalRendezvous) read.
Result<void> Resolver::crash_loop() {
  auto limit = int_in(flag::k_crash_loop_limit, 0, 1 << 20, "a non-negative count (0: off)");
  if (!limit) {
    return limit.error();
  }
  auto window = util::parse_seconds(text(flag::k_crash_loop_window));
  if (!window || window->count() <= 0) {
    return bad(flag::k_crash_loop_window, "a positive number of seconds");
  }
  cfg_.rdzv.rdzv_settings.crash_loop_limit = *limit;
  cfg_.rdzv.rdzv_settings.crash_loop_window = *window;
  note(flag::k_crash_loop_limit, text(flag::k_crash_loop_limit));
  note(flag::k_crash_loop_window, text(flag::k_crash_loop_window));
  return {};
}

}  // namespace ddprun::config::detail
