#pragma once
// The key/value store the rendezvous executor needs: a TCPStore subset. The store module's
// client implements it over the network; MemoryKv is the in-process reference.

#include "ddprun/net/asio.hpp"
#include "ddprun/util/result.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace ddprun::rdzv {

class Kv {
 public:
  virtual ~Kv() = default;
  /// The value of `key`, or nullopt when it is missing; never blocks on the key.
  virtual asio::awaitable<Result<std::optional<std::string>>> get_now(std::string key) = 0;
  /// TCPStore compare_set: stores `desired` when the current value equals `expected`, or when
  /// the key is missing and `expected` is empty. Returns the value now stored (`expected`
  /// itself when the key is missing and `expected` is not empty, as TCPStore does).
  virtual asio::awaitable<Result<std::string>> compare_set(std::string key, std::string expected,
                                                           std::string desired) = 0;
  virtual asio::awaitable<Result<void>> set(std::string key, std::string value) = 0;
  /// Adds `delta` to the integer at `key` (missing: 0) and returns the new value.
  virtual asio::awaitable<Result<std::int64_t>> add(std::string key, std::int64_t delta) = 0;
  /// Blocks until `key` exists, at most `timeout` (then an ErrorCode::timeout error).
  virtual asio::awaitable<Result<std::string>> get(std::string key,
                                                   std::chrono::milliseconds timeout) = 0;
};

/// In-process Kv on one io_context (single thread, like the agent). Blocking gets park on a
/// timer that set/compare_set/add wake. `fail_all` makes every later call fail, to test
/// connection loss.
class MemoryKv final : public Kv {
 public:
  explicit MemoryKv(asio::io_context& ctx) : ctx_(ctx) {}

  asio::awaitable<Result<std::optional<std::string>>> get_now(std::string key) override;
  asio::awaitable<Result<std::string>> compare_set(std::string key, std::string expected,
                                                   std::string desired) override;
  asio::awaitable<Result<void>> set(std::string key, std::string value) override;
  asio::awaitable<Result<std::int64_t>> add(std::string key, std::int64_t delta) override;
  asio::awaitable<Result<std::string>> get(std::string key,
                                           std::chrono::milliseconds timeout) override;

  void fail_all(bool on) { failing_ = on; }
  /// Direct access for tests (no coroutine needed).
  std::optional<std::string> peek(const std::string& key) const;
  void poke(const std::string& key, std::string value);

 private:
  void store(const std::string& key, std::string value);
  Error failure(const std::string& op, const std::string& key) const;

  asio::io_context& ctx_;
  std::map<std::string, std::string> data_;
  /// One shared timer per waiting get(); store() cancels them all so they re-check.
  std::map<std::string, std::vector<std::weak_ptr<asio::steady_timer>>> waiters_;
  bool failing_ = false;
};

}  // namespace ddprun::rdzv
