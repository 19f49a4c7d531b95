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
#include <utility>
#include <vector>

namespace ddprun::rdzv {

/// The keys a Kv::wait_for_change() watches: any write or removal of one of `changes` ends
/// it; only the removal of one of `removals` does (a leased key whose lease ran out, whose
/// writes the waiter reads by their time instead of being woken by each).
struct WatchSet {
  std::vector<std::string> changes;
  std::vector<std::string> removals;
};

class Kv {
 public:
  virtual ~Kv() = default;
  /// TCPStore compare_set: stores `desired` when the current value equals `expected`, or when
  /// the key is missing and `expected` is empty. Returns the value now stored (`expected`
  /// itself when the key is missing and `expected` is not empty, as TCPStore does).
  virtual asio::awaitable<Result<std::string>> compare_set(std::string key, std::string expected,
                                                           std::string desired) = 0;
  virtual asio::awaitable<Result<void>> set(std::string key, std::string value) = 0;
  /// Adds `delta` to the integer at `key` (missing: 0) and returns the new value. The
  /// rendezvous adds only 0 (a read) and 1, which is all a counting store supports.
  virtual asio::awaitable<Result<std::int64_t>> add(std::string key, std::int64_t delta) = 0;
  /// True when add() counts keys of its own under `key` instead of storing a value there
  /// (etcd): a counter is then read only through add(key, 0) and has no value to sign.
  virtual bool add_counts_keys() const { return false; }
  /// Blocks until `key` exists, at most `timeout` (then an ErrorCode::timeout error).
  virtual asio::awaitable<Result<std::string>> get(std::string key,
                                                   std::chrono::milliseconds timeout) = 0;
  /// The values of `keys` in one request, "" for a missing key; never blocks.
  virtual asio::awaitable<Result<std::vector<std::string>>> multi_get_now(
      std::vector<std::string> keys) = 0;
  /// Stores every pair in one request.
  virtual asio::awaitable<Result<void>> multi_set(
      std::vector<std::pair<std::string, std::string>> pairs) = 0;
  /// Ends every blocking get() in progress now, with an error (a leaving node's join), and
  /// every wait_for_change() (which then returns true).
  virtual void interrupt_waits() = 0;

  /// Waits for other nodes' writes. Ends when `timer` fires (the caller arms it and may cancel
  /// it to end the wait early) or, on a store that watches (watches_changes()), at the first put
  /// or delete of one of `keys.changes`, or delete of one of `keys.removals`, after this Kv's
  /// last read. Returns true when a change (or interrupt_waits()) ended it: look again at once.
  /// The default only waits on the timer: the TCPStore cannot watch, so c10d polls as it
  /// always did.
  virtual asio::awaitable<bool> wait_for_change(WatchSet keys, asio::steady_timer& timer);
  /// Whether wait_for_change() ends at a change; callers may then wait longer between looks.
  virtual bool watches_changes() const { return false; }
  /// Whether an operation that failed with `e` may succeed if tried again after a pause (etcd:
  /// no member answered in time, or every one refused as overloaded, as a cluster under a
  /// burst of thousands of agents does): a join then pauses and looks again, until its
  /// deadline. False where the store itself is gone (a TCPStore that reconnects by itself
  /// during the join timeout and whose loss is then final).
  virtual bool is_transient([[maybe_unused]] const Error& e) const { return false; }
};

inline asio::awaitable<bool> Kv::wait_for_change([[maybe_unused]] WatchSet keys,
                                                 asio::steady_timer& timer) {
  boost::system::error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  co_return false;
}

/// In-process Kv on one io_context (single thread, like the agent). Blocking gets park on a
/// timer that set/compare_set/add wake. `fail_all` makes every later call fail, to test
/// connection loss.
class MemoryKv final : public Kv {
 public:
  explicit MemoryKv(asio::io_context& ctx) : ctx_(ctx) {}

  asio::awaitable<Result<std::string>> compare_set(std::string key, std::string expected,
                                                   std::string desired) override;
  asio::awaitable<Result<void>> set(std::string key, std::string value) override;
  asio::awaitable<Result<std::int64_t>> add(std::string key, std::int64_t delta) override;
  asio::awaitable<Result<std::string>> get(std::string key,
                                           std::chrono::milliseconds timeout) override;
  asio::awaitable<Result<std::vector<std::string>>> multi_get_now(
      std::vector<std::string> keys) override;
  asio::awaitable<Result<void>> multi_set(
      std::vector<std::pair<std::string, std::string>> pairs) override;
  void interrupt_waits() override;

  /// Ends every waiting get() when `interrupts` (its caller's counter) changed since it began.
  asio::awaitable<Result<std::string>> get_unless(std::string key,
                                                  std::chrono::milliseconds timeout,
                                                  const int& interrupts);
  /// Makes every waiting get() look again (at its key and at its interrupt counter).
  void wake_all();

  void fail_all(bool on) { failing_ = on; }
  /// After `after` more calls, the next `calls` calls fail (as fail_all does), each failure
  /// transient (is_transient).
  void fail_next(int calls, int after = 0) {
    failing_calls_ = calls;
    calls_before_failing_ = after;
  }
  bool is_transient(const Error& e) const override {
    return e.code == ErrorCode::io && e.message.find(k_transient_mark) != std::string::npos;
  }
  /// Direct access for tests (no coroutine needed).
  std::optional<std::string> peek(const std::string& key) const;
  void poke(const std::string& key, std::string value);

 private:
  static constexpr std::string_view k_transient_mark = "(for now)";
  void store(const std::string& key, std::string value);
  /// The failure of this call, if it fails (fail_all, or one of fail_next's calls, which it
  /// uses up).
  std::optional<Error> fault(const std::string& op, const std::string& key);

  asio::io_context& ctx_;
  std::map<std::string, std::string> data_;
  /// One shared timer per waiting get(); store() cancels them all so they re-check.
  std::map<std::string, std::vector<std::weak_ptr<asio::steady_timer>>> waiters_;
  bool failing_ = false;
  int failing_calls_ = 0;
  int calls_before_failing_ = 0;
  int interrupts_ = 0;  ///< interrupt_waits() calls: a get() that sees it change ends
};

/// One agent's own connection to a MemoryKv shared by several: interrupt_waits() ends only the
/// waits begun through it, as closing one agent's store connections would.
class MemoryKvClient final : public Kv {
 public:
  explicit MemoryKvClient(MemoryKv& kv) : kv_(kv) {}

  asio::awaitable<Result<std::string>> compare_set(std::string key, std::string expected,
                                                   std::string desired) override {
    return kv_.compare_set(std::move(key), std::move(expected), std::move(desired));
  }
  asio::awaitable<Result<void>> set(std::string key, std::string value) override {
    return kv_.set(std::move(key), std::move(value));
  }
  asio::awaitable<Result<std::int64_t>> add(std::string key, std::int64_t delta) override {
    return kv_.add(std::move(key), delta);
  }
  asio::awaitable<Result<std::string>> get(std::string key,
                                           std::chrono::milliseconds timeout) override {
    return kv_.get_unless(std::move(key), timeout, interrupts_);
  }
  asio::awaitable<Result<std::vector<std::string>>> multi_get_now(
      std::vector<std::string> keys) override {
    return kv_.multi_get_now(std::move(keys));
  }
  asio::awaitable<Result<void>> multi_set(
      std::vector<std::pair<std::string, std::string>> pairs) override {
    return kv_.multi_set(std::move(pairs));
  }
  void interrupt_waits() override {
    ++interrupts_;
    kv_.wake_all();
  }
  bool is_transient(const Error& e) const override { return kv_.is_transient(e); }

 private:
  MemoryKv& kv_;
  int interrupts_ = 0;
};

}  // namespace ddprun::rdzv
