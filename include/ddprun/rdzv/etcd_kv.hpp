#pragma once
// rdzv::Kv on etcd v3 (issue #18): the rendezvous algorithm stays the one in rdzv; etcd is
// another store under it. Every key lives under `prefix`. What etcd does better than the
// TCPStore emulation is used directly: compare_set is a txn on the value (no lock, no
// server-side state), add counts keys (one txn, nothing to lose to another node: see add()), a
// blocking get is a watch (no polling), multi_get_now / multi_set are txns of ranges / puts (one
// round trip per 128 keys, etcd's default --max-txn-ops), and wait_for_change is a watch: one
// long-lived stream per key a wait names (a "feed"), not a poll. Per key, not one stream on the
// run's prefix: that prefix holds every agent's heartbeat, so each agent would receive all of them
// (N^2 events per interval).

#include "ddprun/etcd/client.hpp"
#include "ddprun/rdzv/kv.hpp"

#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <string_view>

namespace ddprun::rdzv {

class EtcdFeeds;

/// etcd's default limit on the operations of one txn (--max-txn-ops).
inline constexpr std::size_t k_etcd_max_txn_ops = 128;
/// A counter `key` is the number of keys under key + this ("/+/" sorts before "/0": no
/// rendezvous key of the layout in state.hpp lies under it).
inline constexpr std::string_view k_counter_infix = "/+/";

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
  /// `delta` 0 reads, 1 adds; the counter is the number of keys under key + k_counter_infix
  /// (each add creates one, without a lease), never a value at `key`. One request either way.
  asio::awaitable<Result<std::int64_t>> add(std::string key, std::int64_t delta) override;
  bool add_counts_keys() const override { return true; }
  asio::awaitable<Result<std::string>> get(std::string key,
                                           std::chrono::milliseconds timeout) override;
  asio::awaitable<Result<std::vector<std::string>>> multi_get_now(
      std::vector<std::string> keys) override;
  asio::awaitable<Result<void>> multi_set(
      std::vector<std::pair<std::string, std::string>> pairs) override;
  /// Cancels the watches of every blocking get() in progress (each returns ErrorCode::closed),
  /// ends every wait_for_change() and closes every feed.
  void interrupt_waits() override;

  /// Ends at `timer` or at the first put or delete of one of `keys.changes` (or, for a counter
  /// this Kv added to or read, an add to it), or delete of one of `keys.removals` (a feed
  /// that etcd sends no puts: its NOPUT filter), after this Kv's last read
  /// (a change that came while no wait named its key ends the next wait that does, at once).
  /// Each key's feed opens in the background at the first wait naming it, from the revision
  /// after the last read, so opening never delays a wait and nothing in between is missed; a
  /// feed that neither this wait nor one in progress names is closed. A feed whose stream
  /// fails ends the waits naming it (their read then says what is wrong) and opens again.
  asio::awaitable<bool> wait_for_change(WatchSet keys, asio::steady_timer& timer) override;
  bool watches_changes() const override { return true; }
  /// No member answered in time (ErrorCode::timeout, ErrorCode::io: every member timed out,
  /// refused the connection or refused the call as overloaded): the cluster may be busy with a
  /// burst, between leaders or restarting. Every write here is safe to send again (an add
  /// sent again finds its own key).
  bool is_transient(const Error& e) const override {
    return e.code == ErrorCode::timeout || e.code == ErrorCode::io;
  }
  /// Closes every feed: each stream's connection closes now. Waits in progress are not ended.
  void close_feeds();
  /// Keys with an open feed (tests).
  std::size_t feed_count() const;

  /// Later writes carry `lease` (a replacement for one that was lost).
  void set_lease(etcd::LeaseId lease) { lease_ = lease; }
  /// Writes every key that set() or multi_set() last wrote with the lease again, with the
  /// current one (after set_lease() replaced a lost lease, whose keys etcd deleted). Returns how
  /// many keys were written.
  asio::awaitable<Result<std::size_t>> rewrite_leased();
  const std::string& prefix() const { return prefix_; }
  /// Tests: runs between a blocking get's read and the watch that follows it (the window in
  /// which etcd may compact the revision the watch starts from).
  void set_before_watch(std::function<void()> hook) { before_watch_ = std::move(hook); }
  /// Tests: the names of the keys this Kv's adds create (default: 16 random hex digits).
  void set_name_source(std::function<std::string()> names) { name_source_ = std::move(names); }

  struct Wait;  // one blocking get's watch and flags, shared with its deadline timer

 private:
  std::string full(const std::string& key) const { return prefix_ + key; }
  etcd::PutRequest put_of(const std::string& key, std::string value) const;
  /// put_of, remembering the value of a leased key for rewrite_leased().
  etcd::PutRequest kept_put_of(const std::string& key, std::string value);
  asio::awaitable<Result<std::string>> read_or_wait(const std::string& key,
                                                    std::chrono::milliseconds timeout, Wait& wait);
  /// The first put of `key` after revision `after`; nullopt when etcd compacted `after + 1`
  /// before the watch began (read again).
  asio::awaitable<std::optional<Result<std::string>>> wait_for_put(
      const std::string& key, etcd::Revision after, std::chrono::milliseconds timeout, Wait& wait);
  void note_read(etcd::Revision revision) { read_revision_ = std::max(read_revision_, revision); }
  /// One try of add(key, 1): the count, or nullopt when the drawn name was taken.
  asio::awaitable<Result<std::optional<std::int64_t>>> add_one(const std::string& key,
                                                               const std::string& members);
  /// The keys under `members` at `revision` (0: now).
  asio::awaitable<Result<std::int64_t>> count_at(const std::string& members,
                                                 etcd::Revision revision);

  etcd::Client& client_;
  std::string prefix_;
  etcd::LeaseId lease_;
  LeasedKeys leased_;
  std::set<std::shared_ptr<Wait>> waits_;
  int interrupts_ = 0;  // interrupt_waits() calls, so a get() still opening its watch ends too
  std::unique_ptr<EtcdFeeds> feeds_;  // wait_for_change's watch streams (etcd_kv_feeds.hpp)
  etcd::Revision read_revision_ = 0;  // the newest revision a read of this Kv saw
  std::map<std::string, std::string> leased_values_;  // what rewrite_leased() writes
  std::function<void()> before_watch_;                // tests only
  std::function<std::string()> name_source_;          // tests only
  std::mt19937_64 rng_{std::random_device{}()};       // names of the counters' keys
  std::set<std::string> counters_;                    // keys add() was called on
  std::string adder_;  // the value of this Kv's counter keys: a resent add finds its own
  /// The key an add that failed tried to create, by counter: the next add to that counter
  /// (the caller trying again) tries the same key, so an add applied unseen counts once.
  std::map<std::string, std::string> pending_adds_;
};

}  // namespace ddprun::rdzv
