#pragma once
// The rendezvous token (store/auth.hpp) on a store with no agent in front of it (etcd-v3):
// instead of a handshake with the store's host, every agent signs what it writes and checks
// what it reads. A value is stored as
//
//   <HMAC-SHA256(token, key "\n" nonce "\n" value), hex> ":" <nonce> ":" <value>
//
// with an empty nonce for set/compare_set/multi_set (so compare_set's expected value, signed
// again, is the exact bytes stored) and a fresh random nonce for each write of add() on a store
// that keeps a counter as a value, whose compare-and-swap loop must never mistake another
// agent's equal write for its own (etcd counts keys instead: nothing is signed there). A value
// that does not verify (written without the token, with another one, or under another key)
// is an ErrorCode::config error naming the key, never data.

#include "ddprun/rdzv/kv.hpp"

#include <random>
#include <string>

namespace ddprun::rdzv {

class SignedKv final : public Kv {
 public:
  /// `inner` must outlive this object; `token` is not empty.
  SignedKv(Kv& inner, std::string token);

  asio::awaitable<Result<std::string>> compare_set(std::string key, std::string expected,
                                                   std::string desired) override;
  asio::awaitable<Result<void>> set(std::string key, std::string value) override;
  /// On a store whose add() counts keys (etcd) this is the inner add(), unsigned.
  asio::awaitable<Result<std::int64_t>> add(std::string key, std::int64_t delta) override;
  bool add_counts_keys() const override { return inner_.add_counts_keys(); }
  asio::awaitable<Result<std::string>> get(std::string key,
                                           std::chrono::milliseconds timeout) override;
  asio::awaitable<Result<std::vector<std::string>>> multi_get_now(
      std::vector<std::string> keys) override;
  asio::awaitable<Result<void>> multi_set(
      std::vector<std::pair<std::string, std::string>> pairs) override;
  void interrupt_waits() override { inner_.interrupt_waits(); }
  /// Keys are stored under their own names, so the inner store's watch applies as is.
  asio::awaitable<bool> wait_for_change(WatchSet keys, asio::steady_timer& timer) override {
    return inner_.wait_for_change(std::move(keys), timer);
  }
  bool watches_changes() const override { return inner_.watches_changes(); }
  bool is_transient(const Error& e) const override { return inner_.is_transient(e); }

 private:
  Kv& inner_;
  std::string token_;
  std::mt19937_64 rng_{std::random_device{}()};
};

/// The stored form of `value` under `key` (pure; exposed for tests).
std::string sign_entry(std::string_view token, std::string_view key, std::string_view nonce,
                       std::string_view value);
/// The value of a stored entry, or ErrorCode::config when it does not verify.
Result<std::string> open_entry(std::string_view token, std::string_view key,
                               std::string_view stored);
/// Whether `stored` has sign_entry's form (a MAC, a nonce, a value), whoever signed it: a
/// reader without the token can tell a signed run from a broken one.
bool is_signed_entry(std::string_view stored);

}  // namespace ddprun::rdzv
