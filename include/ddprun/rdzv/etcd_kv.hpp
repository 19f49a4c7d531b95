#pragma once
// rdzv::Kv on etcd v3 (issue #18): the rendezvous algorithm stays the one in rdzv; etcd is
// another store under it. Every key lives under `prefix`. What etcd does better than the
// TCPStore emulation is used directly: compare_set and add are txns on the value / on
// mod_revision (no lock, no server-side state), a blocking get is a watch (no polling), and
// multi_get_now / multi_set are txns of ranges / puts (one round trip per 128 keys, etcd's
// default --max-txn-ops).

#include "ddprun/etcd/client.hpp"
#include "ddprun/rdzv/kv.hpp"

#include <functional>
#include <memory>
#include <set>
#include <string>

namespace ddprun::rdzv {

/// etcd's default limit on the operations of one txn (--max-txn-ops).
inline constexpr std::size_t k_etcd_max_txn_ops = 128;

class EtcdKv final : public Kv {
 public:
  /// Which keys (without the prefix) get the lease; empty: every key.
  using LeasedKeys = std::function<bool(const std::string& key)>;

  /// `client` must outlive this object. `lease` (0: none) is attached to every key written for
  /// which `leased` says so, so they vanish with the agent that wrote them when the lease is
  /// not renewed.
  EtcdKv(etcd::Client& client, std::string prefix, etcd::LeaseId lease = 0, LeasedKeys leased = {});
  ~EtcdKv() override;

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
  /// Cancels the watches of every blocking get() in progress: each returns ErrorCode::closed.
  void interrupt_waits() override;

  /// Later writes carry `lease` (a replacement for one that was lost).
  void set_lease(etcd::LeaseId lease) { lease_ = lease; }
  const std::string& prefix() const { return prefix_; }

  struct Wait;  // one blocking get's watch and flags, shared with its deadline timer

 private:
  std::string full(const std::string& key) const { return prefix_ + key; }
  etcd::PutRequest put_of(const std::string& key, std::string value) const;
  asio::awaitable<Result<std::string>> wait_for_put(const std::string& key, etcd::Revision after,
                                                    std::chrono::milliseconds timeout,
                                                    int interrupts);

  etcd::Client& client_;
  std::string prefix_;
  etcd::LeaseId lease_;
  LeasedKeys leased_;
  std::set<std::shared_ptr<Wait>> waits_;
  int interrupts_ = 0;  // interrupt_waits() calls, so a get() still opening its watch ends too
};

}  // namespace ddprun::rdzv
