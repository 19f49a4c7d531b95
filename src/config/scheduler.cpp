#include "scheduler.hpp"

#include "ddprun/config/backends.hpp"
#include "ddprun/util/strings.hpp"

namespace ddprun::config::detail {

namespace {

bool at_default(const cli::ParsedArgs& args, cli::FlagKey dest) {
  return args.at(dest).origin == cli::Origin::default_value;
}

void fill(cli::ParsedArgs& args, cli::FlagKey dest, const std::optional<sched::Value>& v) {
  if (v && at_default(args, dest)) {
    args.settings[dest] = cli::Setting{v->text, cli::Origin::scheduler, v->origin};
  }
}

/// Where the store of the backend `args` names is (nullopt: no backend ddprun runs).
std::optional<StoreHost> store_host(const cli::ParsedArgs& args) {
  const auto* row = find_backend(args.at(cli::flag::k_rdzv_backend).value);
  return row != nullptr ? std::optional(row->store_host) : std::nullopt;
}

/// c10d: the scheduler's head node hosts the store at the rendezvous endpoint.
bool wants_c10d(const cli::ParsedArgs& args) { return store_host(args) == StoreHost::endpoint; }

/// etcd-v3's endpoint is the etcd cluster, which no scheduler knows: it takes only the run id.
bool wants_etcd(const cli::ParsedArgs& args) { return store_host(args) == StoreHost::none; }

}  // namespace

cli::ParsedArgs apply_scheduler(cli::ParsedArgs args, const sched::Detected& d) {
  if (!d.is_present()) {
    return args;
  }
  fill(args, cli::flag::k_nnodes, d.nnodes);
  auto nodes = d.nnodes ? util::parse_int(d.nnodes->text) : Result<std::int64_t>(1);
  bool multi = nodes && *nodes > 1;
  if (!multi) {
    return args;
  }
  fill(args, cli::flag::k_rdzv_id, d.rdzv_id);
  if (wants_etcd(args)) {
    return args;
  }
  if (wants_c10d(args)) {
    if (d.rdzv_endpoint_host && d.rdzv_port && at_default(args, cli::flag::k_rdzv_endpoint)) {
      args.settings[cli::flag::k_rdzv_endpoint] =
          cli::Setting{d.rdzv_endpoint_host->text + ":" + d.rdzv_port->text, cli::Origin::scheduler,
                       d.rdzv_endpoint_host->origin};
    }
    return args;
  }
  fill(args, cli::flag::k_master_addr, d.rdzv_endpoint_host);
  fill(args, cli::flag::k_master_port, d.rdzv_port);
  fill(args, cli::flag::k_node_rank, d.node_rank);
  return args;
}

std::vector<int> derived_ports(const cli::ParsedArgs& args, const sched::Detected& detected) {
  if (wants_etcd(args)) {
    return {};
  }
  const auto dest = wants_c10d(args) ? cli::flag::k_rdzv_endpoint : cli::flag::k_master_port;
  if (args.at(dest).origin != cli::Origin::scheduler) {
    return {};
  }
  return detected.port_candidates;
}

std::optional<int> node_index_of(const sched::Detected& detected) {
  if (!detected.node_rank) {
    return std::nullopt;
  }
  auto index = util::parse_int(detected.node_rank->text);
  if (!index) {
    return std::nullopt;
  }
  return static_cast<int>(*index);
}

}  // namespace ddprun::config::detail
