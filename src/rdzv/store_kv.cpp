#include "ddprun/rdzv/store_kv.hpp"

#include <algorithm>

namespace ddprun::rdzv {

/// An idle Client marked busy for the lifetime of one operation.
struct StoreKv::Lease {
  std::shared_ptr<Slot> slot;
  explicit Lease(std::shared_ptr<Slot> s) : slot(std::move(s)) { slot->busy = true; }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease() {
    slot->busy = false;
    slot->blocking = false;
  }
  store::Client& operator*() const { return *slot->client; }
  store::Client* operator->() const { return slot->client.get(); }
};

StoreKv::StoreKv(asio::io_context& ctx, store::ClientOptions options)
    : ctx_(ctx), options_(std::move(options)) {
  // The rendezvous reads many keys in one request (MULTI_GET), which D0 lacks; the rendezvous
  // store is always a ddprun store, and it speaks every dialect.
  options_.dialect = store::Dialect::d2;
}

StoreKv::Lease StoreKv::lease() {
  for (auto& slot : pool_) {
    if (!slot->busy) {
      const auto& o = slot->client->options();
      if (o.connect_timeout != options_.connect_timeout || o.op_timeout != options_.op_timeout) {
        slot->client = std::make_unique<store::Client>(ctx_, options_);
      }
      return Lease(slot);
    }
  }
  pool_.push_back(std::make_shared<Slot>());
  pool_.back()->client = std::make_unique<store::Client>(ctx_, options_);
  return Lease(pool_.back());
}

asio::awaitable<Result<void>> StoreKv::connect() {
  auto c = lease();
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
  auto c = lease();
  co_return co_await c->compare_set(std::move(key), std::move(expected), std::move(desired));
}

asio::awaitable<Result<void>> StoreKv::set(std::string key, std::string value) {
  auto c = lease();
  co_return co_await c->set(std::move(key), std::move(value));
}

asio::awaitable<Result<std::int64_t>> StoreKv::add(std::string key, std::int64_t delta) {
  auto c = lease();
  co_return co_await c->add(std::move(key), delta);
}

asio::awaitable<Result<std::string>> StoreKv::get(std::string key,
                                                  std::chrono::milliseconds timeout) {
  auto c = lease();
  std::vector<std::string> keys{key};
  c.slot->blocking = true;
  auto waited = co_await c->wait(std::move(keys), timeout);
  c.slot->blocking = false;
  if (!waited) {
    co_return waited.error();
  }
  co_return co_await c->get(std::move(key));
}

asio::awaitable<Result<std::vector<std::string>>> StoreKv::multi_get_now(
    std::vector<std::string> keys) {
  auto c = lease();
  co_return co_await c->multi_get_now(std::move(keys));
}

asio::awaitable<Result<void>> StoreKv::multi_set(
    std::vector<std::pair<std::string, std::string>> pairs) {
  auto c = lease();
  co_return co_await c->multi_set(std::move(pairs));
}

}  // namespace ddprun::rdzv
