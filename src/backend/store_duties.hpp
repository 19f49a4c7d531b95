#pragma once
// The TCPStores an ElasticRendezvous works with (agent/store_duties.hpp), as the store and
// etcd-v3 backends build them. Internal to the backend module.

#include "ddprun/agent/store_duties.hpp"
#include "ddprun/net/asio.hpp"
#include "ddprun/rdzv/store_kv.hpp"
#include "ddprun/store/server.hpp"

#include <memory>

namespace ddprun::backend {

class TcpStoreDuties final : public agent::StoreDuties {
 public:
  /// `hosted`: the rendezvous store this agent serves (null: another node hosts it, or the
  /// rendezvous is in etcd); `client`: this agent's client of it (null under etcd-v3). Both
  /// must outlive this object.
  TcpStoreDuties(asio::io_context& ctx, store::Server* hosted, rdzv::StoreKv* client)
      : ctx_(ctx), hosted_(hosted), client_(client) {}

  bool hosting() const override { return hosted_ != nullptr; }
  void clear_worker_keys() override;
  std::size_t peer_connections() const override;
  bool has_client() const override { return client_ != nullptr; }
  bool client_connected() const override;
  void bound_calls(std::chrono::milliseconds bound) override;
  void close_client() override;
  Result<rdzv::MasterEndpoint> start_worker_store(const std::string& addr) override;
  void stop_worker_store() override { worker_store_.reset(); }

 private:
  asio::io_context& ctx_;
  store::Server* hosted_;
  rdzv::StoreKv* client_;
  std::unique_ptr<store::Server> worker_store_;  ///< c10d: fresh each round on group rank 0
};

}  // namespace ddprun::backend
