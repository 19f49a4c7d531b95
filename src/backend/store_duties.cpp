// TcpStoreDuties (store_duties.hpp).

#include "store_duties.hpp"

#include "ddprun/host/facts.hpp"

namespace ddprun::backend {

namespace {

/// Workers of every round find their keys under this prefix (torch's agent-store layout).
constexpr const char* k_worker_prefix = "/worker/";

}  // namespace

void TcpStoreDuties::clear_worker_keys() {
  if (hosted_ != nullptr) {
    hosted_->erase_prefix(k_worker_prefix);
  }
}

std::size_t TcpStoreDuties::peer_connections() const {
  if (hosted_ == nullptr) {
    return 0;
  }
  const std::size_t all = hosted_->connection_count();
  const std::size_t own = client_ != nullptr ? client_->open_connections() : 0;
  return all > own ? all - own : 0;
}

bool TcpStoreDuties::client_connected() const {
  return client_ == nullptr || client_->is_connected();
}

void TcpStoreDuties::bound_calls(std::chrono::milliseconds bound) {
  if (client_ != nullptr) {
    client_->bound_operations(bound);
  }
}

void TcpStoreDuties::close_client() {
  if (client_ != nullptr) {
    client_->close_all();
  }
}

Result<rdzv::MasterEndpoint> TcpStoreDuties::start_worker_store(const std::string& addr) {
  worker_store_ = std::make_unique<store::Server>(ctx_);
  // Workers reach this store at `addr` only: listen there, not on every interface.
  if (auto ok = worker_store_->listen(host::exact_bind_address(addr), 0); !ok) {
    return ok.error();
  }
  return rdzv::MasterEndpoint{addr, worker_store_->port()};
}

}  // namespace ddprun::backend
