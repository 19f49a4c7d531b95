// EtcdFeeds (etcd_kv_feeds.hpp): EtcdKv's watch streams for wait_for_change, and the Kv's
// calls into them.

#include "etcd_kv_feeds.hpp"

#include "ddprun/etcd/codec.hpp"
#include "ddprun/rdzv/etcd_kv.hpp"
#include "ddprun/util/strings.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace ddprun::rdzv {

/// What etcd said when it ended a watch: its reason, or the compaction.
std::string cancel_text(const etcd::WatchMessage& m) {
  if (!m.cancel_reason.empty()) {
    return m.cancel_reason;
  }
  if (m.compact_revision > 0) {
    return fmt::format("compacted up to revision {}", m.compact_revision);
  }
  return "no reason given";
}

namespace {

/// How long a feed whose stream could not be opened (or broke on every member) rests.
constexpr std::chrono::milliseconds k_feed_retry{1000};

bool names(const std::vector<std::string>& keys, const std::string& key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

bool names(const WatchSet& keys, const std::string& key) {
  return names(keys.changes, key) || names(keys.removals, key);
}

/// The end of what the feed of a counter watches: the key and its adds (under full_key +
/// k_counter_infix). The few other keys in between (none in the layout of state.hpp) are
/// filtered out by is_fed().
std::string counter_end(const std::string& full_key) {
  return etcd::prefix_end(full_key + std::string(k_counter_infix));
}

bool is_fed(const std::string& full_key, const std::string& changed) {
  return changed == full_key || util::starts_with(changed, full_key + std::string(k_counter_infix));
}

}  // namespace

struct EtcdFeeds::Feed {
  Feed(etcd::Client& c, std::string k, std::string f, bool counter, bool removals,
       std::function<void()> n)
      : client(c),
        key(std::move(k)),
        full_key(std::move(f)),
        range_end(counter ? counter_end(full_key) : std::string()),
        removals_only(removals),
        notify(std::move(n)),
        pause(c.executor()) {}
  etcd::Client& client;
  std::string key;               // as the waits name it
  std::string full_key;          // with the prefix
  std::string range_end;         // a counter's: its adds too; else empty (the key alone)
  bool removals_only;            // a WatchSet::removals key: etcd sends its deletes alone
  std::function<void()> notify;  // EtcdFeeds::on_change(key); only while !closed
  asio::steady_timer pause;
  std::unique_ptr<etcd::Watch> watch;
  etcd::Revision from = 0;  // where the next stream starts (0: now)
  bool closed = false;

  void close() {
    closed = true;
    pause.cancel();
    if (watch) {
      watch->cancel();
    }
  }
};

struct EtcdFeeds::Waiter {
  const WatchSet* keys;
  asio::steady_timer* timer;
  bool woken = false;
};

namespace {

asio::awaitable<void> rest(EtcdFeeds::Feed& feed) {
  feed.pause.expires_after(k_feed_retry);
  boost::system::error_code ec;
  co_await feed.pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

/// Reads an open stream until it ends or the feed is closed; true when it broke (no member
/// carried it), false when closed or ended by etcd.
asio::awaitable<bool> follow(EtcdFeeds::Feed& feed) {
  for (;;) {
    auto m = co_await feed.watch->next();
    if (feed.closed) {
      co_return false;
    }
    if (!m || m->canceled) {
      // No member would carry the stream, or etcd ended it (its start was compacted): the
      // waits look for themselves, and a new stream starts after the last change seen, or at
      // the oldest revision etcd kept (changes since then are seen again: a wait reads again).
      spdlog::debug("etcd kv: watch of \"{}\" ended: {}", feed.key,
                    m ? cancel_text(*m) : m.error().message);
      if (m) {
        feed.from = m->compact_revision;  // the oldest revision etcd still has (0: now)
      }
      feed.notify();
      co_return !m;
    }
    bool fed = false;
    for (const auto& e : m->events) {
      feed.from = std::max(feed.from, e.kv.mod_revision + 1);
      const bool counts = !feed.removals_only || e.type == etcd::WatchEvent::Type::del;
      fed = fed || (counts && is_fed(feed.full_key, e.kv.key));
    }
    if (fed) {
      feed.notify();
    }
  }
}

/// A feed's life: open a stream, follow it, open another when it ends, until closed.
asio::awaitable<void> pump(std::shared_ptr<EtcdFeeds::Feed> feed) {
  while (!feed->closed) {
    etcd::WatchRequest request{feed->full_key, feed->range_end, feed->from, false,
                               feed->removals_only};
    auto opened = co_await feed->client.watch(std::move(request));
    if (feed->closed) {
      break;  // `opened`, if any, is cancelled as it goes
    }
    if (!opened) {
      spdlog::debug("etcd kv: watching \"{}\": {}", feed->key, opened.error().message);
      feed->notify();
      co_await rest(*feed);
      continue;
    }
    feed->watch = std::move(*opened);
    const bool broke = co_await follow(*feed);
    feed->watch.reset();  // no next() is pending any more
    if (broke && !feed->closed) {
      co_await rest(*feed);  // no member would carry it: do not spin
    }
  }
}

}  // namespace

EtcdFeeds::EtcdFeeds(etcd::Client& client, std::string prefix)
    : client_(client), prefix_(std::move(prefix)) {}

EtcdFeeds::~EtcdFeeds() {
  try {
    close();
  } catch (...) {
    // A timer's cancel() throws only on an OS error; a feed then ends at its next wake-up.
  }
}

void EtcdFeeds::wake_all() {
  for (Waiter* w : waiters_) {
    w->woken = true;
    w->timer->cancel();
  }
  close();
}

asio::awaitable<bool> EtcdFeeds::wait(const WatchSet& keys, asio::steady_timer& timer,
                                      const std::set<std::string>& counters,
                                      etcd::Revision read_revision) {
  keep(keys, counters, read_revision);
  if (take_unseen(keys)) {
    co_return true;
  }
  Waiter w{&keys, &timer};
  waiters_.insert(&w);
  boost::system::error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  waiters_.erase(&w);
  co_return w.woken;
}

void EtcdFeeds::keep(const WatchSet& keys, const std::set<std::string>& counters,
                     etcd::Revision read_revision) {
  for (auto it = feeds_.begin(); it != feeds_.end();) {
    const bool wanted = names(keys, it->first) ||
                        std::any_of(waiters_.begin(), waiters_.end(),
                                    [&](const Waiter* w) { return names(*w->keys, it->first); });
    // A key now watched the other way gets a new feed (the waits name each key one way).
    const bool other_way =
        names(keys, it->first) && names(keys.removals, it->first) != it->second->removals_only;
    if (wanted && !other_way) {
      ++it;
      continue;
    }
    it->second->close();
    unseen_.erase(it->first);
    it = feeds_.erase(it);
  }
  for (const auto* list : {&keys.changes, &keys.removals}) {
    for (const auto& key : *list) {
      if (feeds_.count(key) != 0) {
        continue;
      }
      auto feed = std::make_shared<Feed>(client_, key, prefix_ + key, counters.count(key) != 0,
                                         list == &keys.removals, [this, key] { on_change(key); });
      feed->from = read_revision > 0 ? read_revision + 1 : 0;
      feeds_.emplace(key, feed);
      asio::co_spawn(client_.executor(), pump(std::move(feed)), asio::detached);
    }
  }
}

void EtcdFeeds::on_change(const std::string& key) {
  bool named = false;
  for (Waiter* w : waiters_) {
    if (names(*w->keys, key)) {
      named = true;
      w->woken = true;
      w->timer->cancel();
    }
  }
  if (!named) {
    unseen_.insert(key);
  }
}

bool EtcdFeeds::take_unseen(const WatchSet& keys) {
  bool any = false;
  for (const auto* list : {&keys.changes, &keys.removals}) {
    for (const auto& key : *list) {
      any = unseen_.erase(key) > 0 || any;
    }
  }
  return any;
}

void EtcdFeeds::close() {
  for (auto& [key, feed] : feeds_) {
    feed->close();
  }
  feeds_.clear();
  unseen_.clear();
}

// The Kv's side: its waits go through the feeds.

asio::awaitable<bool> EtcdKv::wait_for_change(WatchSet keys, asio::steady_timer& timer) {
  co_return co_await feeds_->wait(keys, timer, counters_, read_revision_);
}

void EtcdKv::close_feeds() { feeds_->close(); }

std::size_t EtcdKv::feed_count() const { return feeds_->count(); }

}  // namespace ddprun::rdzv
