#include "ddprun/config/rendezvous_policy.hpp"

#include "ddprun/util/strings.hpp"

namespace ddprun::config {

bool is_single_node(const LaunchConfig& cfg) {
  if (cfg.rdzv_backend == RdzvBackend::etcd_v3) {
    return false;
  }
  return cfg.standalone ||
         (cfg.nnodes.max == 1 && (cfg.rdzv_backend == RdzvBackend::static_ ||
                                  cfg.rdzv_endpoint.host.empty() || cfg.rdzv_endpoint.port == 0));
}

Endpoint store_endpoint(const LaunchConfig& cfg) {
  if (cfg.rdzv_backend == RdzvBackend::static_) {
    return {cfg.master_addr, cfg.master_port};
  }
  auto ep = cfg.rdzv_endpoint;
  if (ep.host.empty()) {
    ep.host = "localhost";
  }
  return ep;
}

HostingChoice hosting_choice(const LaunchConfig& cfg, bool endpoint_is_local) {
  if (cfg.rdzv_backend == RdzvBackend::static_) {
    return {cfg.node_rank == 0, true};
  }
  if (auto it = cfg.rdzv_conf.find("is_host"); it != cfg.rdzv_conf.end()) {
    const auto word = util::parse_bool_word(it->second);  // resolve() refused a bad one
    return {word && *word, true};
  }
  return {endpoint_is_local, false};
}

bool listens_everywhere(const LaunchConfig& cfg, bool address_is_loopback, bool name_is_loopback) {
  return address_is_loopback && cfg.nnodes.max > 1 && !name_is_loopback;
}

}  // namespace ddprun::config
