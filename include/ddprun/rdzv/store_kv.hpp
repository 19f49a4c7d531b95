#pragma once
// rdzv::Kv over the network store client. The rendezvous runs several coroutines at once
// (joining, heartbeats, watching) while a store Client carries one request at a time, so
// StoreKv lends each operation an idle Client from a small pool: no operation waits for a
// blocking get (one that finds every client in one gets a new connection), while an operation
// that meets a short one waits for it, so a running node holds one connection to the store
// (issue #28: 16,384 nodes would otherwise need more descriptors than one store host has).

#include "ddprun/rdzv/kv.hpp"
#include "ddprun/store/client.hpp"

#include <memory>
#include <vector>

namespace ddprun::rdzv {

class StoreKv final : public Kv {
 public:
  StoreKv(asio::io_context& ctx, store::ClientOptions options);

  asio::awaitable<Result<std::string>> compare_set(std::string key, std::string expected,
                                                   std::string desired) override;
  asio::awaitable<Result<void>> set(std::string key, std::string value) override;
  asio::awaitable<Result<std::int64_t>> add(std::string key, std::int64_t delta) override;
  asio::awaitable<Result<std::string>> get(std::string key,
                                           std::chrono::milliseconds timeout) override;
  /// Needs a client dialect with MULTI_GET (d1, d2): the agents use d2.
  asio::awaitable<Result<std::vector<std::string>>> multi_get_now(
      std::vector<std::string> keys) override;
  asio::awaitable<Result<void>> multi_set(
      std::vector<std::pair<std::string, std::string>> pairs) override;
  /// Closes the connections of blocking gets in progress (they fail at once).
  void interrupt_waits() override;

  /// Connects one client now (retrying up to the connect timeout), so a missing store is
  /// reported before the rendezvous starts.
  asio::awaitable<Result<void>> connect();
  /// Whether a pooled client holds a connection to the store now.
  bool is_connected() const;
  /// How many of the pool's connections are open.
  std::size_t open_connections() const;
  /// Closes every pooled connection (the store host then sees only its peers).
  void close_all();
  /// Once the store is known to exist: reconnecting gives up after `bound` and every
  /// operation times out after at most `bound` (a blocking get keeps its own timeout), so a
  /// store that died or is cut off is reported in about twice `bound`. Idle clients take the
  /// new limits at their next lease.
  void bound_operations(std::chrono::milliseconds bound);

 private:
  struct Lease;
  struct Slot;
  std::shared_ptr<Slot> idle_slot();
  asio::awaitable<std::shared_ptr<Slot>> acquire(bool blocking);

  asio::io_context& ctx_;
  store::ClientOptions options_;
  struct Slot {
    std::unique_ptr<store::Client> client;
    bool busy = false;
    bool blocking = false;  ///< busy with a blocking get()
  };
  /// Shared with the leases: an operation still pending when the agent exits is destroyed with
  /// the io_context, after this object, and its lease must not touch freed memory then.
  std::vector<std::shared_ptr<Slot>> pool_;
  /// Cancelled whenever an operation ends: the ones waiting in acquire() look again.
  std::shared_ptr<asio::steady_timer> freed_;
};

}  // namespace ddprun::rdzv
