#pragma once
// What ddprun knows about each rendezvous backend, one row each: how the flag spells it, which
// --rdzv-conf keys it reads, what its endpoint names and its port when none is given, whether a
// one-node job may skip the shared rendezvous, and who hosts the store. Everything that differs
// between backends reads its row here instead of testing the enum (docs/architecture.md, "A new
// rendezvous backend").

#include "ddprun/config/launch_config.hpp"
#include "ddprun/config/rdzv_conf.hpp"

#include <span>
#include <string_view>

namespace ddprun::config {

/// Where a backend's rendezvous store is.
enum class StoreHost {
  node_rank_zero,  ///< static: the node of --node-rank 0, at --master-addr:--master-port
  endpoint,        ///< c10d: the agent at --rdzv-endpoint (or is_host=1)
  none,            ///< etcd-v3: the rendezvous lives in etcd; no agent hosts it
};

struct BackendRow {
  RdzvBackend backend;
  std::string_view name;      ///< as --rdzv-backend spells it
  BackendMask conf_bit;       ///< the --rdzv-conf keys it reads (rdzv_conf.cpp's table)
  bool endpoint_is_members;   ///< --rdzv-endpoint lists etcd members, not one store
  int default_port;           ///< the store's (or the members') port when the endpoint has none
  std::string_view endpoint;  ///< what --rdzv-endpoint names, for help and messages
  bool may_be_single_node;    ///< a one-node job may run without a shared rendezvous
  StoreHost store_host;
  /// Every node is named by --node-rank and all must come (min = max, torchrun's static
  /// timeout); elsewhere nodes join as they come and get their ranks from the round.
  bool fixed_nodes;
};

/// Every backend, in the order --help lists them.
std::span<const BackendRow> backend_rows();
/// The row of `backend`.
const BackendRow& row_of(RdzvBackend backend);
/// The row --rdzv-backend `name` selects; nullptr for a name ddprun does not run.
const BackendRow* find_backend(std::string_view name);
/// "static, c10d or etcd-v3": the names, for messages.
std::string backend_names();

/// The rendezvous endpoint as --rdzv-endpoint names it: etcd-v3's members
/// ("http://h1:2379,http://h2:2379"), else the store's "host:port" (an IPv6 host in brackets).
std::string endpoint_text(RdzvBackend backend, const Endpoint& store, const EtcdSettings& etcd);

}  // namespace ddprun::config
