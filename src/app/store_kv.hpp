#pragma once
// rdzv::Kv over the network store client. The rendezvous runs several coroutines at once
// (joining, heartbeats, watching) while a store Client carries one request at a time, so
// StoreKv lends each operation an idle Client from a small pool, creating one when all are
// busy: a blocking get never delays a heartbeat.

#include "ddprun/rdzv/kv.hpp"
#include "ddprun/store/client.hpp"

#include <memory>
#include <vector>

namespace ddprun::app {

class StoreKv final : public rdzv::Kv {
 public:
  StoreKv(asio::io_context& ctx, store::ClientOptions options);

  asio::awaitable<Result<std::optional<std::string>>> get_now(std::string key) override;
  asio::awaitable<Result<std::string>> compare_set(std::string key, std::string expected,
                                                   std::string desired) override;
  asio::awaitable<Result<void>> set(std::string key, std::string value) override;
  asio::awaitable<Result<std::int64_t>> add(std::string key, std::int64_t delta) override;
  asio::awaitable<Result<std::string>> get(std::string key,
                                           std::chrono::milliseconds timeout) override;

  /// Connects one client now (retrying up to the connect timeout), so a missing store is
  /// reported before the rendezvous starts.
  asio::awaitable<Result<void>> connect();
  /// Closes every pooled connection (the store host then sees only its peers).
  void close_all();

 private:
  struct Lease;
  Lease lease();

  asio::io_context& ctx_;
  store::ClientOptions options_;
  struct Slot {
    std::unique_ptr<store::Client> client;
    bool busy = false;
  };
  std::vector<std::unique_ptr<Slot>> pool_;
};

}  // namespace ddprun::app
