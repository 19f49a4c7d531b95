// The rendezvous backends' table (backends.hpp).

#include "ddprun/config/backends.hpp"

#include "ddprun/etcd/endpoints.hpp"
#include "ddprun/util/default_ports.hpp"

#include <algorithm>
#include <string>

namespace ddprun::config {

namespace {

constexpr BackendRow k_rows[] = {
    {RdzvBackend::static_, "static", k_read_by_static, false, util::k_default_master_port,
     "MASTER_ADDR[:MASTER_PORT], node 0's store", true, StoreHost::node_rank_zero, true},
    {RdzvBackend::c10d, "c10d", k_read_by_c10d, false, util::k_default_c10d_port,
     "HOST[:PORT], the agents' rendezvous store", true, StoreHost::endpoint, false},
    {RdzvBackend::etcd_v3, "etcd-v3", k_read_by_etcd_v3, true, etcd::k_default_port,
     "[http://|https://]HOST[:PORT],..., the etcd members", false, StoreHost::none, false},
};

}  // namespace

std::span<const BackendRow> backend_rows() { return k_rows; }

const BackendRow& row_of(RdzvBackend backend) {
  const auto* it = std::find_if(std::begin(k_rows), std::end(k_rows),
                                [backend](const BackendRow& r) { return r.backend == backend; });
  return it != std::end(k_rows) ? *it : k_rows[0];
}

const BackendRow* find_backend(std::string_view name) {
  const auto* it = std::find_if(std::begin(k_rows), std::end(k_rows),
                                [name](const BackendRow& r) { return r.name == name; });
  return it != std::end(k_rows) ? it : nullptr;
}

std::string backend_names() {
  std::string out;
  for (std::size_t i = 0; i < std::size(k_rows); ++i) {
    out += i == 0 ? "" : (i + 1 == std::size(k_rows) ? " or " : ", ");
    out += k_rows[i].name;
  }
  return out;
}

std::string endpoint_text(RdzvBackend backend, const Endpoint& store, const EtcdSettings& etcd) {
  if (row_of(backend).endpoint_is_members) {
    return etcd::to_string(etcd.endpoints);
  }
  const bool v6 = store.host.find(':') != std::string::npos;
  return (v6 ? "[" + store.host + "]" : store.host) + ":" + std::to_string(store.port);
}

std::string_view to_string(RdzvBackend backend) { return row_of(backend).name; }

}  // namespace ddprun::config
