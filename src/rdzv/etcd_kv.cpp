// rdzv::Kv over etcd. TCPStore semantics are kept exactly (compare_set's return value, add on
// a missing key, "" for a missing key in multi_get_now); each call is one txn or a short loop
// of them. A blocking get reads once, then watches from the revision after that read, so a
// put between the two is not missed; when etcd compacted that revision first, it reads again.
//
// wait_for_change goes through EtcdFeeds (etcd_kv_feeds.hpp): a watch stream per key the waits
// name, closed by the waits, interrupt_waits(), close_feeds() or the destructor.

#include "ddprun/rdzv/etcd_kv.hpp"

#include "ddprun/etcd/codec.hpp"
#include "ddprun/util/strings.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "etcd_kv_feeds.hpp"

namespace ddprun::rdzv {
namespace {

using etcd::TxnOp;

etcd::RangeRequest one_key(std::string key) { return {std::move(key), {}, 0, 0, false}; }

/// The value of the first range response of a txn, nullopt when the key is missing.
std::optional<etcd::KeyValue> first_kv(const etcd::TxnResult& t) {
  if (t.responses.empty() || t.responses.front().range.kvs.empty()) {
    return std::nullopt;
  }
  return t.responses.front().range.kvs.front();
}

Error interrupted(const std::string& key) {
  return make_error(ErrorCode::closed, fmt::format("etcd kv: get \"{}\": interrupted", key));
}

Error no_value(const std::string& key, std::chrono::milliseconds timeout) {
  return make_error(ErrorCode::timeout, fmt::format("etcd kv: get \"{}\": no value within {} ms",
                                                    key, timeout.count()));
}

/// Counts the keys under `members` (a counter's adds) at `revision` (0: now).
etcd::RangeRequest count_of(const std::string& members, etcd::Revision revision) {
  return {members, etcd::prefix_end(members), 0, revision, false, true};
}

}  // namespace

struct EtcdKv::Wait {
  Wait(const asio::any_io_executor& ex, int interrupts_seen)
      : deadline(ex), interrupts(interrupts_seen) {}
  std::unique_ptr<etcd::Watch> watch;  // null between two watches
  asio::steady_timer deadline;
  int interrupts;  // interrupt_waits() calls before this get began
  bool timed_out = false;
};

EtcdKv::EtcdKv(etcd::Client& client, std::string prefix, etcd::LeaseId lease, LeasedKeys leased)
    : client_(client),
      prefix_(std::move(prefix)),
      lease_(lease),
      leased_(std::move(leased)),
      feeds_(std::make_unique<EtcdFeeds>(client_, prefix_)) {
  adder_ = fmt::format("{:016x}", rng_());
}

// Waits in progress are not touched: their timers may be gone already (the caller must not
// wait on a Kv it destroys).
EtcdKv::~EtcdKv() {
  try {
    for (const auto& wait : waits_) {
      if (wait->watch) {
        wait->watch->cancel();
      }
    }
    close_feeds();
  } catch (...) {
    // A timer's cancel() throws only on an OS error; a feed then ends at its next wake-up.
  }
}

etcd::PutRequest EtcdKv::put_of(const std::string& key, std::string value) const {
  const bool with_lease = !leased_ || leased_(key);
  return {full(key), std::move(value), with_lease ? lease_ : 0};
}

etcd::PutRequest EtcdKv::kept_put_of(const std::string& key, std::string value) {
  etcd::PutRequest p = put_of(key, std::move(value));
  if (p.lease != 0) {
    leased_values_[key] = p.value;
  }
  return p;
}

asio::awaitable<Result<std::string>> EtcdKv::compare_set(std::string key, std::string expected,
                                                         std::string desired) {
  // A missing key matches an empty `expected`; an existing key matches on its value.
  etcd::TxnRequest t{
      {expected.empty() ? etcd::key_absent(full(key)) : etcd::value_is(full(key), expected)},
      {TxnOp::set(put_of(key, desired))},
      {TxnOp::get(one_key(full(key)))}};
  // Safe to send again after a timeout: a second run finds `desired` stored by the first and
  // answers it, which the caller takes for success (unless another node changed the value in
  // between: then the caller reads again and decides again, as after any lost race).
  auto r = co_await client_.txn(std::move(t), true);
  if (!r) {
    co_return r.error();
  }
  if (r->succeeded) {
    co_return desired;
  }
  auto current = first_kv(*r);
  if (!current) {
    co_return expected;  // TCPStore: missing key, non-empty expected
  }
  if (expected.empty() && current->value.empty()) {
    // An existing empty value also equals "": swap on that very revision.
    etcd::TxnRequest again{{etcd::key_unchanged(full(key), current->mod_revision)},
                           {TxnOp::set(put_of(key, desired))},
                           {TxnOp::get(one_key(full(key)))}};
    auto r2 = co_await client_.txn(std::move(again), true);
    if (!r2) {
      co_return r2.error();
    }
    auto now = first_kv(*r2);
    co_return r2->succeeded ? desired : (now ? now->value : std::string());
  }
  co_return current->value;
}

asio::awaitable<Result<void>> EtcdKv::set(std::string key, std::string value) {
  etcd::PutRequest p = kept_put_of(key, std::move(value));
  auto r = co_await client_.put(std::move(p));
  if (!r) {
    co_return r.error();
  }
  co_return Result<void>{};
}

// A counter is the number of keys under "<key>/+/": add(key, 1) creates one of its own (a random
// name, created only if absent) and counts them in the same txn, which etcd applies atomically
// after every earlier write, so the k-th add returns k with no compare-and-set to lose to
// another node. The old way, a compare-and-swap on one value, cost O(N^2) txns when N nodes joined
// at once. Member keys never carry a lease: a counter must not go down when a node dies.
asio::awaitable<Result<std::int64_t>> EtcdKv::add(std::string key, std::int64_t delta) {
  if (delta != 0 && delta != 1) {
    co_return make_error(ErrorCode::internal,
                         fmt::format("etcd kv: add on \"{}\": delta {}; an etcd counter counts "
                                     "its adds, so only 0 (read) and 1 are possible",
                                     key, delta));
  }
  counters_.insert(key);  // a later wait on it watches its adds
  const std::string members = full(key) + std::string(k_counter_infix);
  if (delta == 0) {
    co_return co_await count_at(members, 0);
  }
  for (;;) {
    auto added = co_await add_one(key, members);
    if (!added) {
      co_return added.error();
    }
    if (*added) {
      co_return **added;
    }
  }
}

// The txn is safe to send again after a timeout: a second run finds the key the first one
// created (its value names this Kv) and counts at that key's creation, so the answer is the
// same. Another Kv's key of the same name (one draw in 2^64) makes it draw again (nullopt).
// A failed add leaves its key's name pending: the next add of the counter (the caller trying
// again) sends the same txn again, however long after. Adds in flight at once each have their
// own name: only a failed one's is handed on.
asio::awaitable<Result<std::optional<std::int64_t>>> EtcdKv::add_one(const std::string& key,
                                                                     const std::string& members) {
  using R = Result<std::optional<std::int64_t>>;
  std::string mine;
  if (auto pending = pending_adds_.find(members); pending != pending_adds_.end()) {
    mine = std::move(pending->second);
    pending_adds_.erase(pending);
  } else {
    mine = members + (name_source_ ? name_source_() : fmt::format("{:016x}", rng_()));
  }
  etcd::TxnRequest t{{etcd::key_absent(mine)},
                     {TxnOp::set({mine, adder_, 0}), TxnOp::get(count_of(members, 0))},
                     {TxnOp::get(one_key(mine))}};
  auto r = co_await client_.txn(std::move(t), true);
  if (!r) {
    pending_adds_[members] = mine;
    co_return r.error();
  }
  note_read(r->revision);
  if (r->succeeded && r->responses.size() == 2) {
    co_return R(r->responses[1].range.count);
  }
  if (r->succeeded) {
    co_return make_error(ErrorCode::protocol,
                         fmt::format("etcd kv: add on \"{}\": the txn answered {} responses, "
                                     "expected 2 (the put and the count)",
                                     key, r->responses.size()));
  }
  auto first = first_kv(*r);
  if (!first || first->value != adder_) {
    co_return R(std::nullopt);  // another Kv's key of that name: draw again
  }
  auto n = co_await count_at(members, first->create_revision);
  if (!n) {
    pending_adds_[members] = mine;  // the next add finds this key and counts at it again
    co_return n.error();
  }
  co_return R(*n);
}

asio::awaitable<Result<std::int64_t>> EtcdKv::count_at(const std::string& members,
                                                       etcd::Revision revision) {
  // A named request: g++ 12 destroys a braced temporary argument of a co_await twice.
  etcd::RangeRequest count = count_of(members, revision);
  auto r = co_await client_.range(std::move(count));
  if (!r) {
    co_return r.error();
  }
  note_read(r->revision);
  co_return r->count;
}

asio::awaitable<Result<std::string>> EtcdKv::get(std::string key,
                                                 std::chrono::milliseconds timeout) {
  auto wait = std::make_shared<Wait>(client_.executor(), interrupts_);
  waits_.insert(wait);
  wait->deadline.expires_after(timeout);
  wait->deadline.async_wait([wait](const boost::system::error_code& ec) {
    if (!ec) {
      wait->timed_out = true;
      if (wait->watch) {
        wait->watch->cancel();
      }
    }
  });
  auto out = co_await read_or_wait(key, timeout, *wait);
  wait->deadline.cancel();
  if (wait->watch) {
    wait->watch->cancel();
  }
  waits_.erase(wait);
  co_return out;
}

// Read, then watch from the revision after the read. When etcd compacted that revision before
// the watch began (a busy cluster, an operator's compaction), the watch is created and cancelled
// at once: the key is read again, and watched from after that read, until the deadline.
asio::awaitable<Result<std::string>> EtcdKv::read_or_wait(const std::string& key,
                                                          std::chrono::milliseconds timeout,
                                                          Wait& wait) {
  for (;;) {
    etcd::RangeRequest read = one_key(full(key));
    auto now = co_await client_.range(std::move(read));
    if (!now) {
      co_return now.error();
    }
    note_read(now->revision);
    if (!now->kvs.empty()) {
      co_return std::move(now->kvs.front().value);
    }
    if (wait.timed_out) {
      co_return no_value(key, timeout);
    }
    if (before_watch_) {
      before_watch_();
    }
    auto put = co_await wait_for_put(key, now->revision, timeout, wait);
    if (put) {
      co_return std::move(*put);
    }
    spdlog::debug(
        "etcd kv: get \"{}\": revision {} was compacted before the watch began; "
        "reading again",
        key, now->revision + 1);
  }
}

asio::awaitable<std::optional<Result<std::string>>> EtcdKv::wait_for_put(
    const std::string& key, etcd::Revision after, std::chrono::milliseconds timeout, Wait& wait) {
  etcd::WatchRequest request{full(key), {}, after + 1, false};
  auto watch = co_await client_.watch(std::move(request));
  if (!watch) {
    co_return watch.error();
  }
  wait.watch = std::move(*watch);
  if (wait.interrupts != interrupts_) {
    co_return interrupted(key);  // interrupt_waits() ran while the watch was being opened
  }
  if (wait.timed_out) {
    co_return no_value(key, timeout);  // the deadline passed while the watch was being opened
  }
  for (;;) {
    auto m = co_await wait.watch->next();
    if (!m) {
      if (wait.timed_out) {
        co_return no_value(key, timeout);
      }
      co_return wait.watch->is_cancelled() ? interrupted(key) : m.error();
    }
    auto put = std::find_if(m->events.begin(), m->events.end(), [](const etcd::WatchEvent& e) {
      return e.type == etcd::WatchEvent::Type::put;
    });
    if (put != m->events.end()) {
      co_return std::move(put->kv.value);
    }
    if (m->canceled) {
      if (m->compact_revision > 0) {
        co_return std::nullopt;
      }
      co_return make_error(ErrorCode::closed,
                           fmt::format("etcd kv: get \"{}\": etcd at {} "
                                       "cancelled the watch ({})",
                                       key, wait.watch->member(), cancel_text(*m)));
    }
  }
}

asio::awaitable<Result<std::vector<std::string>>> EtcdKv::multi_get_now(
    std::vector<std::string> keys) {
  std::vector<std::string> values;
  values.reserve(keys.size());
  for (std::size_t start = 0; start < keys.size(); start += k_etcd_max_txn_ops) {
    etcd::TxnRequest t;
    const std::size_t end = std::min(keys.size(), start + k_etcd_max_txn_ops);
    for (std::size_t i = start; i < end; ++i) {
      t.success.push_back(TxnOp::get(one_key(full(keys[i]))));
    }
    auto r = co_await client_.txn(std::move(t));
    if (!r) {
      co_return r.error();
    }
    note_read(r->revision);
    for (const etcd::TxnOpResult& op : r->responses) {
      values.push_back(op.range.kvs.empty() ? std::string() : op.range.kvs.front().value);
    }
  }
  co_return values;
}

asio::awaitable<Result<void>> EtcdKv::multi_set(
    std::vector<std::pair<std::string, std::string>> pairs) {
  for (std::size_t start = 0; start < pairs.size(); start += k_etcd_max_txn_ops) {
    etcd::TxnRequest t;
    const std::size_t end = std::min(pairs.size(), start + k_etcd_max_txn_ops);
    for (std::size_t i = start; i < end; ++i) {
      t.success.push_back(TxnOp::set(kept_put_of(pairs[i].first, std::move(pairs[i].second))));
    }
    auto r = co_await client_.txn(std::move(t), true);  // the same values: safe to send again
    if (!r) {
      co_return r.error();
    }
  }
  co_return Result<void>{};
}

void EtcdKv::interrupt_waits() {
  ++interrupts_;
  for (const auto& wait : waits_) {
    if (wait->watch) {
      wait->watch->cancel();
    }
  }
  feeds_->wake_all();
}

asio::awaitable<Result<std::size_t>> EtcdKv::rewrite_leased() {
  std::vector<std::pair<std::string, std::string>> pairs(leased_values_.begin(),
                                                         leased_values_.end());
  const std::size_t n = pairs.size();
  auto written = co_await multi_set(std::move(pairs));
  if (!written) {
    co_return written.error();
  }
  co_return n;
}

}  // namespace ddprun::rdzv
