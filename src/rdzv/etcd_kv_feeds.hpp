#pragma once
// What etcd_kv.cpp and etcd_kv_feeds.cpp share. Internal to the rdzv module.
//
// EtcdFeeds: EtcdKv's wait_for_change. Each key a wait names gets a Feed, a watch stream read
// by its own detached coroutine (pump), kept while waits keep naming the key. A change ends
// the waits naming the key by cancelling their timers or, when none is waiting, is kept
// (unseen) for the next one. A pump shares only its Feed with this object: once the feed is
// closed it touches nothing else, so it may outlive this object until its stream's cancelled
// read returns.

#include "ddprun/etcd/client.hpp"
#include "ddprun/etcd/codec.hpp"
#include "ddprun/net/asio.hpp"
#include "ddprun/rdzv/kv.hpp"

#include <map>
#include <memory>
#include <set>
#include <string>

namespace ddprun::rdzv {

class EtcdFeeds {
 public:
  /// `client` must outlive this object; `prefix` is the Kv's key prefix.
  EtcdFeeds(etcd::Client& client, std::string prefix);
  ~EtcdFeeds();
  EtcdFeeds(const EtcdFeeds&) = delete;
  EtcdFeeds& operator=(const EtcdFeeds&) = delete;

  /// Waits until one of `keys` changes (true) or `timer` expires or is cancelled (false).
  /// `counters`: the keys that count their adds (watched with them); `read_revision`: the
  /// newest revision a read saw (new feeds start after it).
  asio::awaitable<bool> wait(const WatchSet& keys, asio::steady_timer& timer,
                             const std::set<std::string>& counters, etcd::Revision read_revision);
  /// Ends every wait now (woken) and closes every feed.
  void wake_all();
  /// Closes every feed, forgetting unseen changes; waits in progress are left alone.
  void close();
  std::size_t count() const { return feeds_.size(); }

  struct Feed;  ///< one key's long-lived watch, shared with the coroutine that reads it

 private:
  struct Waiter;  ///< one wait() in progress

  /// Opens a feed for each of `keys` without one; closes those nobody waits for.
  void keep(const WatchSet& keys, const std::set<std::string>& counters,
            etcd::Revision read_revision);
  /// A feed saw `key` change: ends the waits naming it, or keeps it for the next one.
  void on_change(const std::string& key);
  /// Whether one of `keys` changed unseen; forgets those that did.
  bool take_unseen(const WatchSet& keys);

  etcd::Client& client_;
  std::string prefix_;
  std::map<std::string, std::shared_ptr<Feed>> feeds_;  // by key, without the prefix
  std::set<Waiter*> waiters_;
  std::set<std::string> unseen_;  // keys changed while no wait named them
};

/// What etcd said when it ended a watch: its reason, or the compaction.
std::string cancel_text(const etcd::WatchMessage& m);

}  // namespace ddprun::rdzv
