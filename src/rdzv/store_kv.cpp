#include "ddprun/rdzv/store_kv.hpp"

#include <algorithm>

namespace ddprun::rdzv {

/// A Client marked busy for the lifetime of one operation; when it ends, the operations
/// waiting for a client (acquire()) look again.
struct StoreKv::Lease {
  std::shared_ptr<Slot> slot;
  std::weak_ptr<asio::steady_timer> freed;  ///< gone with the StoreKv: then nobody waits
  Lease(std::shared_ptr<Slot> s, std::weak_ptr<asio::steady_timer> f)
      : slot(std::move(s)), freed(std::move(f)) {}
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease() {
    slot->busy = false;
    slot->blocking = false;
    if (auto waiters = freed.lock()) {
      try {
        waiters->cancel();
      } catch (const boost::system::system_error&) {  // cannot fail on a live timer
      }
    }
  }
  store::Client& operator*() const { return *slot->client; }
  store::Client* operator->() const { return slot->client.get(); }
};

StoreKv::StoreKv(asio::io_context& ctx, store::ClientOptions options)
    : ctx_(ctx),
      options_(std::move(options)),
      freed_(std::make_shared<asio::steady_timer>(ctx, asio::steady_timer::time_point::max())) {
  // The rendezvous reads many keys in one request (MULTI_GET), which D0 lacks; the rendezvous
  // store is always a ddprun store, and it speaks every dialect.
  options_.dialect = store::Dialect::d2;
}

std::shared_ptr<StoreKv::Slot> StoreKv::idle_slot() {
  for (auto& slot : pool_) {
    if (!slot->busy) {
      const auto& o = slot->client->options();
      if (o.connect_timeout != options_.connect_timeout || o.op_timeout != options_.op_timeout) {
        slot->client = std::make_unique<store::Client>(ctx_, options_);
      }
      return slot;
    }
  }
  return nullptr;
}

// An idle client if there is one. Else any operation waits for a short one to end (a heartbeat
// queues behind a watch's read on the node's one connection: with thousands of nodes, the
// store host's descriptors are the limit, not the milliseconds), and only one that finds every
// client in a blocking get opens a new connection, so no operation waits for a blocking get.
asio::awaitable<std::shared_ptr<StoreKv::Slot>> StoreKv::acquire(bool blocking) {
  for (;;) {
    auto slot = idle_slot();
    const bool short_op_busy = std::any_of(pool_.begin(), pool_.end(),
                                           [](const auto& s) { return s->busy && !s->blocking; });
    if (!slot && !short_op_busy) {
      pool_.push_back(std::make_shared<Slot>());
      pool_.back()->client = std::make_unique<store::Client>(ctx_, options_);
      slot = pool_.back();
    }
    if (slot) {
      slot->busy = true;
      slot->blocking = blocking;
      co_return slot;
    }
    auto waiters = freed_;  // the wait holds it: this StoreKv may go first
    boost::system::error_code ec;
    co_await waiters->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

asio::awaitable<Result<void>> StoreKv::connect() {
  Lease c(co_await acquire(false), freed_);
  co_return co_await c->connect();
}

bool StoreKv::is_connected() const {
  return std::any_of(pool_.begin(), pool_.end(),
                     [](const auto& slot) { return slot->client->is_connected(); });
}

std::size_t StoreKv::open_connections() const {
  return static_cast<std::size_t>(std::count_if(
      pool_.begin(), pool_.end(), [](const auto& slot) { return slot->client->is_connected(); }));
}

void StoreKv::close_all() {
  for (auto& slot : pool_) {
    if (!slot->busy) {
      slot->client->close();
    }
  }
}

void StoreKv::interrupt_waits() {
  for (auto& slot : pool_) {
    if (slot->blocking) {
      slot->client->close();
    }
  }
}

void StoreKv::bound_operations(std::chrono::milliseconds bound) {
  options_.connect_timeout = std::min(options_.connect_timeout, bound);
  options_.op_timeout = std::min(options_.op_timeout, bound);
}

asio::awaitable<Result<std::string>> StoreKv::compare_set(std::string key, std::string expected,
                                                          std::string desired) {
  Lease c(co_await acquire(false), freed_);
  co_return co_await c->compare_set(std::move(key), std::move(expected), std::move(desired));
}

asio::awaitable<Result<void>> StoreKv::set(std::string key, std::string value) {
  Lease c(co_await acquire(false), freed_);
  co_return co_await c->set(std::move(key), std::move(value));
}

asio::awaitable<Result<std::int64_t>> StoreKv::add(std::string key, std::int64_t delta) {
  Lease c(co_await acquire(false), freed_);
  co_return co_await c->add(std::move(key), delta);
}

asio::awaitable<Result<std::string>> StoreKv::get(std::string key,
                                                  std::chrono::milliseconds timeout) {
  Lease c(co_await acquire(true), freed_);
  std::vector<std::string> keys{key};
  auto waited = co_await c->wait(std::move(keys), timeout);
  c.slot->blocking = false;
  if (!waited) {
    co_return waited.error();
  }
  co_return co_await c->get(std::move(key));
}

asio::awaitable<Result<std::vector<std::string>>> StoreKv::multi_get_now(
    std::vector<std::string> keys) {
  Lease c(co_await acquire(false), freed_);
  co_return co_await c->multi_get_now(std::move(keys));
}

asio::awaitable<Result<void>> StoreKv::multi_set(
    std::vector<std::pair<std::string, std::string>> pairs) {
  Lease c(co_await acquire(false), freed_);
  co_return co_await c->multi_set(std::move(pairs));
}

}  // namespace ddprun::rdzv
