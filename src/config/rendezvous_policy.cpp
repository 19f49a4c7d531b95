#include "ddprun/config/rendezvous_policy.hpp"

#include "ddprun/config/backends.hpp"
#include "ddprun/util/strings.hpp"

namespace ddprun::config {

bool is_single_node(const RendezvousPlan& cfg) {
  const auto& row = row_of(cfg.rdzv_backend);
  if (!row.may_be_single_node) {
    return false;
  }
  // One node whose store is its own: static's always is; c10d's when no endpoint names
  // another host, or it asks for a free port.
  return cfg.standalone ||
         (cfg.nnodes.max == 1 && (row.store_host == StoreHost::node_rank_zero ||
                                  cfg.rdzv_endpoint.host.empty() || cfg.rdzv_endpoint.port == 0));
}

Endpoint store_endpoint(const RendezvousPlan& cfg) {
  if (row_of(cfg.rdzv_backend).store_host == StoreHost::node_rank_zero) {
    return {cfg.master_addr, cfg.master_port};
  }
  auto ep = cfg.rdzv_endpoint;
  if (ep.host.empty()) {
    ep.host = "localhost";
  }
  return ep;
}

Result<std::optional<bool>> read_is_host(const RendezvousPlan& cfg) {
  auto it = cfg.rdzv_conf.find("is_host");
  if (it == cfg.rdzv_conf.end()) {
    return std::optional<bool>();
  }
  auto word = util::parse_bool_word(it->second);
  if (!word) {
    return make_error(ErrorCode::usage,
                      util::quoted("is_host=" + it->second) +
                          ": expected is_host=1, true, t, yes, y or 0, false, f, no, n");
  }
  return std::optional<bool>(*word);
}

HostingChoice hosting_choice(const RendezvousPlan& cfg, bool endpoint_is_local) {
  if (row_of(cfg.rdzv_backend).store_host == StoreHost::node_rank_zero) {
    return {cfg.node_rank == 0, true};
  }
  if (auto is_host = read_is_host(cfg); is_host && *is_host) {  // resolve() refused a bad one
    return {**is_host, true};
  }
  return {endpoint_is_local, false};
}

bool listens_everywhere(const RendezvousPlan& cfg, bool address_is_loopback,
                        bool name_is_loopback) {
  return address_is_loopback && cfg.nnodes.max > 1 && !name_is_loopback;
}

}  // namespace ddprun::config
