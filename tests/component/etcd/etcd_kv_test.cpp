// rdzv::EtcdKv against a real etcd: the TCPStore semantics the rendezvous relies on.

#include "ddprun/rdzv/etcd_kv.hpp"

#include "ddprun/rdzv/members.hpp"
#include "ddprun/util/batches.hpp"

#include "etcd_fixture.hpp"

namespace ddprun::etcd::test {
namespace {

using namespace std::chrono_literals;
using rdzv::EtcdKv;

class EtcdKvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DDPRUN_SKIP_WITHOUT_ETCD();
    ASSERT_EQ(cluster_.start(), "");
    client_ = make_client(io_, cluster_.endpoints());
    other_ = make_client(io_, cluster_.endpoints());
    ASSERT_TRUE(client_ && other_);
    kv_ = std::make_unique<EtcdKv>(*client_, "/job/");
    peer_ = std::make_unique<EtcdKv>(*other_, "/job/");
  }
  template <typename T>
  T run(asio::awaitable<T> co) {
    return run_co(io_, std::move(co));
  }

  ::ddprun::test::EtcdCluster cluster_;
  asio::io_context io_{1};
  std::unique_ptr<Client> client_;
  std::unique_ptr<Client> other_;
  std::unique_ptr<EtcdKv> kv_;
  std::unique_ptr<EtcdKv> peer_;
};

TEST_F(EtcdKvTest, CompareSetFollowsTcpStore) {
  // Missing key, non-empty expected: nothing stored, `expected` returned.
  EXPECT_EQ(*run(kv_->compare_set("k", "x", "y")), "x");
  EXPECT_EQ(*run(kv_->multi_get_now({"k"})), std::vector<std::string>{""});
  // Missing key, empty expected: stored.
  EXPECT_EQ(*run(kv_->compare_set("k", "", "a")), "a");
  // Match: swapped; mismatch: the current value.
  EXPECT_EQ(*run(peer_->compare_set("k", "a", "b")), "b");
  EXPECT_EQ(*run(kv_->compare_set("k", "a", "c")), "b");
  EXPECT_EQ(*run(kv_->compare_set("k", "", "c")), "b");
  // An existing empty value equals "".
  ASSERT_TRUE(run(kv_->set("e", "")));
  EXPECT_EQ(*run(kv_->compare_set("e", "", "z")), "z");
  // The prefix scopes the keys.
  auto raw = run(client_->get("/job/k"));
  ASSERT_TRUE(raw && raw->has_value());
  EXPECT_EQ((*raw)->value, "b");
}

TEST_F(EtcdKvTest, AMembersListTooLargeForOneEtcdRequestIsWrittenAndReadInParts) {
  std::vector<rdzv::NodeDesc> members(12'000);
  for (std::size_t i = 0; i < members.size(); ++i) {
    members[i].addr = "node-" + std::to_string(i) + ".cluster.example.org";
    members[i].pid = static_cast<std::int64_t>(100'000 + i);
    members[i].nproc = 8;
  }
  // As one value it is more than etcd takes in one request (1.5 MiB).
  auto whole = run(kv_->set("one-value", rdzv::encode_members(members)));
  ASSERT_FALSE(whole);
  EXPECT_NE(whole.error().message.find("too large"), std::string::npos) << whole.error().message;

  for (auto& batch :
       util::batches(rdzv::member_parts("job", 3, members), rdzv::k_member_parts_per_request)) {
    auto written = run(kv_->multi_set(std::move(batch)));
    ASSERT_TRUE(written) << written.error().message;
  }
  rdzv::MembersReader reader("job", 3);
  Result<bool> done = false;
  for (int request = 0; done && !*done && request < 10; ++request) {
    auto texts = run(peer_->multi_get_now(reader.next_keys()));
    ASSERT_TRUE(texts) << texts.error().message;
    done = reader.take(*texts);
  }
  ASSERT_TRUE(done) << done.error().message;
  ASSERT_TRUE(*done);
  EXPECT_EQ(reader.take_list(), members);
}

asio::awaitable<void> add_many(EtcdKv& kv, int times, std::vector<std::int64_t>& seen) {
  for (int i = 0; i < times; ++i) {
    auto r = co_await kv.add("counter", 1);
    EXPECT_TRUE(r) << r.error().message;
    if (r) {
      seen.push_back(*r);
    }
  }
}

TEST_F(EtcdKvTest, ConcurrentAddsCountEveryIncrementOnce) {
  std::vector<std::int64_t> seen;
  int finished = 0;
  for (EtcdKv* kv : {kv_.get(), peer_.get(), kv_.get(), peer_.get()}) {
    asio::co_spawn(io_, add_many(*kv, 10, seen), [&](const std::exception_ptr&) { ++finished; });
  }
  io_.restart();
  while (finished < 4 && io_.run_one() > 0) {
  }
  ASSERT_EQ(seen.size(), 40U);
  std::sort(seen.begin(), seen.end());
  for (std::size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i], static_cast<std::int64_t>(i + 1));
  }
  EXPECT_EQ(*run(peer_->add("counter", 0)), 40) << "adding 0 reads the count";
  EXPECT_EQ(*run(kv_->add("never added", 0)), 0);
  auto bad = run(kv_->add("counter", -40));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "etcd kv: add on \"counter\": delta -40; an etcd counter counts its adds, so only 0 "
            "(read) and 1 are possible");
  // Each add is one key of its own under the counter, with no lease, never a value at the key.
  auto keys = run(client_->range({"/job/counter/+/", "/job/counter/+0", 0, 0, true}));
  ASSERT_TRUE(keys) << keys.error().message;
  ASSERT_EQ(keys->kvs.size(), 40U);
  EXPECT_EQ(keys->kvs.front().lease, 0);
  EXPECT_FALSE(run(client_->get("/job/counter"))->has_value());
}

// An add sent again after a timeout (its first send applied) answers what the first would
// have; another Kv's key of the same name is a clash, and the add draws another name.
TEST_F(EtcdKvTest, AnAddSentAgainFindsItsOwnKeyAndAClashDrawsAgain) {
  std::vector<std::string> names{"a", "a"};
  kv_->set_name_source([&] {
    std::string n = names.front();
    names.erase(names.begin());
    return n;
  });
  ASSERT_EQ(*run(kv_->add("c", 1)), 1);  // key "a"
  ASSERT_EQ(*run(peer_->add("c", 1)), 2);
  EXPECT_EQ(*run(kv_->add("c", 1)), 1) << "key \"a\" again: the first add's own answer";
  EXPECT_EQ(*run(peer_->add("c", 0)), 2) << "and nothing more was counted";
  peer_->set_name_source([] { return std::string("b"); });
  std::vector<std::string> next{"b", "z"};
  kv_->set_name_source([&] {
    std::string n = next.front();
    next.erase(next.begin());
    return n;
  });
  ASSERT_EQ(*run(peer_->add("c", 1)), 3);  // the peer's key "b"
  EXPECT_EQ(*run(kv_->add("c", 1)), 4) << "\"b\" is the peer's: drawn again as \"z\"";
  EXPECT_TRUE(next.empty());
}

// An add whose call failed (etcd stopped: it may apply the txn when it resumes) leaves its key's
// name pending: the caller's next add, however much later, sends the same txn again, so the
// counter counts this node once (a join that looks again after etcd timed out, issue #28).
TEST_F(EtcdKvTest, AnAddTriedAgainAfterAFailedCallCountsOnce) {
  ClientOptions quick;
  quick.call_timeout = 300ms;
  auto client = make_client(io_, cluster_.endpoints(), quick);
  ASSERT_TRUE(client);
  EtcdKv kv(*client, "/job/");
  int drawn = 0;
  kv.set_name_source([&] { return "n" + std::to_string(++drawn); });
  cluster_.pause_member(0, true);
  auto failed = run(kv.add("c", 1));
  cluster_.pause_member(0, false);
  ASSERT_FALSE(failed);
  EXPECT_TRUE(kv.is_transient(failed.error())) << failed.error().message;
  auto again = run(kv.add("c", 1));
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(*again, 1);
  EXPECT_EQ(drawn, 1) << "the second try drew a new name";
  EXPECT_EQ(*run(peer_->add("c", 0)), 1);
  EXPECT_EQ(*run(kv.add("c", 1)), 2) << "a new add after a success draws a new name";
  EXPECT_EQ(drawn, 2);
}

TEST_F(EtcdKvTest, ACountersKeysOutliveTheLeaseOfWhoAdded) {
  auto lease = run(client_->lease_grant(std::chrono::seconds(30), etcd::new_lease_id()));
  ASSERT_TRUE(lease) << lease.error().message;
  EtcdKv leased(*client_, "/job/", lease->id);  // every key it writes gets the lease...
  ASSERT_TRUE(run(leased.set("mine", "x")));
  ASSERT_EQ(*run(leased.add("c", 1)), 1);
  ASSERT_EQ(*run(leased.add("c", 1)), 2);
  ASSERT_TRUE(run(client_->lease_revoke(lease->id)));
  EXPECT_EQ(*run(peer_->multi_get_now({"mine"})), std::vector<std::string>{""});
  EXPECT_EQ(*run(peer_->add("c", 0)), 2) << "...but a counter must never go down";
}

TEST_F(EtcdKvTest, GetWaitsForASetThenTimesOutOrIsInterrupted) {
  std::optional<Result<std::string>> got;
  asio::co_spawn(io_, into(kv_->get("late", 5s), got), asio::detached);
  io_.restart();
  io_.run_for(100ms);
  EXPECT_FALSE(got.has_value()) << "get() returned before the key existed";
  ASSERT_TRUE(run(peer_->set("late", "here")));
  while (!got) {
    io_.run_one();
  }
  ASSERT_TRUE(*got) << got->error().message;
  EXPECT_EQ(**got, "here");

  const auto t0 = std::chrono::steady_clock::now();
  auto timed_out = run(kv_->get("never", 300ms));
  ASSERT_FALSE(timed_out);
  EXPECT_EQ(timed_out.error().code, ErrorCode::timeout);
  EXPECT_EQ(timed_out.error().message, "etcd kv: get \"never\": no value within 300 ms");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);

  std::optional<Result<std::string>> interrupted;
  asio::co_spawn(io_, into(kv_->get("never", 10s), interrupted), asio::detached);
  io_.restart();
  io_.run_for(100ms);
  kv_->interrupt_waits();
  while (!interrupted) {
    io_.run_one();
  }
  ASSERT_FALSE(*interrupted);
  EXPECT_EQ(interrupted->error().code, ErrorCode::closed);
  EXPECT_EQ(interrupted->error().message, "etcd kv: get \"never\": interrupted");
}

// Issue #23: etcd compacted the revision after a blocking get's read before its watch began
// (an operator's compaction, a busy shared etcd). etcd then creates the watch and cancels it
// at once; the get must read again and go on waiting, not fail.
TEST_F(EtcdKvTest, GetWhoseWatchStartWasCompactedReadsAgainAndWaits) {
  int reads = 0;
  kv_->set_before_watch([&] {
    if (++reads == 1) {
      ASSERT_EQ(cluster_.write_and_compact("/elsewhere/a"), "");
      ASSERT_EQ(cluster_.write_and_compact("/elsewhere/b"), "");
    }
  });
  std::optional<Result<std::string>> got;
  asio::co_spawn(io_, into(kv_->get("late", 20s), got), asio::detached);
  io_.restart();
  const auto bound = std::chrono::steady_clock::now() + 10s;
  while (reads < 2 && std::chrono::steady_clock::now() < bound) {
    io_.run_for(50ms);
  }
  ASSERT_EQ(reads, 2) << "the get did not read again after its watch was cancelled";
  EXPECT_FALSE(got.has_value()) << (got && !*got ? got->error().message : "returned early");
  ASSERT_TRUE(run(peer_->set("late", "here")));
  while (!got && std::chrono::steady_clock::now() < bound) {
    io_.run_for(50ms);
  }
  ASSERT_TRUE(got.has_value()) << "no value after the put";
  ASSERT_TRUE(*got) << got->error().message;
  EXPECT_EQ(**got, "here");
}

TEST_F(EtcdKvTest, KeyWrittenWhileTheWatchStartWasCompactedIsReturnedByTheSecondRead) {
  int reads = 0;
  kv_->set_before_watch([&] {
    if (++reads == 1) {
      ASSERT_EQ(cluster_.etcdctl({"put", "/job/soon", "v"}), "");
      ASSERT_EQ(cluster_.write_and_compact("/elsewhere/a"), "");
    }
  });
  auto got = run(kv_->get("soon", 20s));
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(*got, "v");
  EXPECT_EQ(reads, 1) << "the value came from the read after the cancelled watch";
}

TEST_F(EtcdKvTest, MultiSetAndMultiGetSpanSeveralTxns) {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::vector<std::string> keys;
  for (int i = 0; i < 300; ++i) {
    pairs.emplace_back("m/" + std::to_string(i), "v" + std::to_string(i));
    keys.push_back("m/" + std::to_string(i));
  }
  keys.emplace_back("m/missing");
  ASSERT_TRUE(run(kv_->multi_set(pairs)));
  auto values = run(peer_->multi_get_now(keys));
  ASSERT_TRUE(values) << values.error().message;
  ASSERT_EQ(values->size(), 301U);
  EXPECT_EQ((*values)[0], "v0");
  EXPECT_EQ((*values)[299], "v299");
  EXPECT_EQ((*values)[300], "");
}

asio::awaitable<void> wait_into(EtcdKv& kv, rdzv::WatchSet keys, asio::steady_timer& timer,
                                std::optional<bool>& out) {
  out = co_await kv.wait_for_change(std::move(keys), timer);
}

/// Starts kv.wait_for_change(keys) with a `bound` timer; the result lands in `out`.
void start_wait(asio::io_context& io, EtcdKv& kv, rdzv::WatchSet keys, asio::steady_timer& timer,
                std::chrono::milliseconds bound, std::optional<bool>& out) {
  out.reset();
  timer.expires_after(bound);
  asio::co_spawn(io, wait_into(kv, std::move(keys), timer, out), asio::detached);
}

void start_wait(asio::io_context& io, EtcdKv& kv, std::vector<std::string> changes,
                asio::steady_timer& timer, std::chrono::milliseconds bound,
                std::optional<bool>& out) {
  start_wait(io, kv, rdzv::WatchSet{std::move(changes), {}}, timer, bound, out);
}

/// Runs `io` until `out` is set, at most `limit`; how long that took.
std::chrono::milliseconds run_until(asio::io_context& io, const std::optional<bool>& out,
                                    std::chrono::milliseconds limit = 5s) {
  const auto t0 = std::chrono::steady_clock::now();
  io.restart();
  while (!out && std::chrono::steady_clock::now() - t0 < limit) {
    io.run_for(10ms);
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               t0);
}

TEST_F(EtcdKvTest, WaitForChangeEndsAtAPutOrADeleteAndOtherwiseAtItsTimer) {
  asio::steady_timer timer(io_);
  std::optional<bool> woke;
  ASSERT_TRUE(run(kv_->multi_get_now({"w"})));  // the wait counts changes after this read
  start_wait(io_, *kv_, {"w", "other"}, timer, 20s, woke);
  ASSERT_TRUE(run(peer_->set("w", "1")));
  run_until(io_, woke);
  ASSERT_TRUE(woke.has_value()) << "a put of a named key did not end the wait";
  EXPECT_TRUE(*woke);

  start_wait(io_, *kv_, {"w"}, timer, 20s, woke);
  ASSERT_TRUE(run(other_->erase({"/job/w", {}})));
  run_until(io_, woke);
  ASSERT_TRUE(woke.has_value()) << "a delete (a lease expiring) did not end the wait";
  EXPECT_TRUE(*woke);

  start_wait(io_, *kv_, {"w"}, timer, 400ms, woke);
  ASSERT_TRUE(run(peer_->set("not-named", "x")));
  const auto took = run_until(io_, woke);
  ASSERT_TRUE(woke.has_value());
  EXPECT_FALSE(*woke) << "another key's change ended the wait";
  EXPECT_GE(took, 300ms);
  EXPECT_EQ(kv_->feed_count(), 1u) << "the feed of \"other\" is closed once no wait names it";
}

TEST_F(EtcdKvTest, AWaitForARemovalIsNotEndedByWritesOfTheKey) {
  asio::steady_timer timer(io_);
  std::optional<bool> woke;
  ASSERT_TRUE(run(kv_->multi_get_now({"hb"})));
  start_wait(io_, *kv_, rdzv::WatchSet{{"header"}, {"hb"}}, timer, 600ms, woke);
  ASSERT_TRUE(run(peer_->set("hb", "1")));
  ASSERT_TRUE(run(peer_->set("hb", "2")));
  const auto took = run_until(io_, woke);
  ASSERT_TRUE(woke.has_value());
  EXPECT_FALSE(*woke) << "a write of a key named for its removal ended the wait";
  EXPECT_GE(took, 500ms);

  start_wait(io_, *kv_, rdzv::WatchSet{{"header"}, {"hb"}}, timer, 20s, woke);
  ASSERT_TRUE(run(other_->erase({"/job/hb", {}})));
  run_until(io_, woke);
  ASSERT_TRUE(woke.has_value()) << "the removal (a lease running out) did not end the wait";
  EXPECT_TRUE(*woke);

  // The same key named for its changes gets a feed that sees its writes.
  start_wait(io_, *kv_, {"hb"}, timer, 20s, woke);
  ASSERT_TRUE(run(peer_->set("hb", "3")));
  run_until(io_, woke);
  ASSERT_TRUE(woke.has_value()) << "a put of a key named for its changes did not end the wait";
  EXPECT_TRUE(*woke);
  EXPECT_EQ(kv_->feed_count(), 1u) << "the removals feed of \"hb\" and that of \"header\" closed";
}

TEST_F(EtcdKvTest, WaitForChangeOnACounterEndsAtAnAddAndNotAtANeighbour) {
  asio::steady_timer timer(io_);
  std::optional<bool> woke;
  ASSERT_TRUE(run(kv_->add("done", 1)));
  start_wait(io_, *kv_, {"done"}, timer, 400ms, woke);
  ASSERT_TRUE(run(peer_->set("done-x", "inside the feed's range, not the counter")));
  ASSERT_TRUE(run(peer_->set("done/1", "after the counter's keys")));
  const auto took = run_until(io_, woke);
  ASSERT_TRUE(woke.has_value());
  EXPECT_FALSE(*woke) << "a key beside the counter ended the wait";
  EXPECT_GE(took, 300ms);

  start_wait(io_, *kv_, {"done"}, timer, 20s, woke);
  ASSERT_EQ(*run(peer_->add("done", 1)), 2);
  run_until(io_, woke);
  ASSERT_TRUE(woke.has_value()) << "another node's add did not end the wait";
  EXPECT_TRUE(*woke);
}

TEST_F(EtcdKvTest, AChangeWhileNobodyWaitsEndsTheNextWaitAtOnce) {
  asio::steady_timer timer(io_);
  std::optional<bool> woke;
  ASSERT_TRUE(run(kv_->multi_get_now({"k"})));
  ASSERT_TRUE(run(peer_->set("k", "before the first wait")));
  start_wait(io_, *kv_, {"k"}, timer, 20s, woke);
  run_until(io_, woke);
  ASSERT_TRUE(woke.has_value()) << "a change after the last read, before the watch, was missed";
  EXPECT_TRUE(*woke);
  // Between two waits (the caller reading): kept for the next wait.
  ASSERT_TRUE(run(peer_->set("k", "between waits")));
  bool seen = false;
  for (int i = 0; i < 200 && !seen; ++i) {
    start_wait(io_, *kv_, {"k"}, timer, 10ms, woke);
    run_until(io_, woke);
    seen = woke.value_or(false);
  }
  EXPECT_TRUE(seen);
}

TEST_F(EtcdKvTest, WaitForChangeEndsWhenItsTimerIsCancelledOrTheKvInterrupted) {
  asio::steady_timer timer(io_);
  std::optional<bool> woke;
  start_wait(io_, *kv_, {"c"}, timer, 20s, woke);
  io_.restart();
  io_.run_for(50ms);
  timer.cancel();
  EXPECT_LT(run_until(io_, woke), 1s);
  ASSERT_TRUE(woke.has_value());
  EXPECT_FALSE(*woke);

  start_wait(io_, *kv_, {"c"}, timer, 20s, woke);
  io_.restart();
  io_.run_for(50ms);
  kv_->interrupt_waits();
  EXPECT_LT(run_until(io_, woke), 1s);
  ASSERT_TRUE(woke.has_value());
  EXPECT_TRUE(*woke) << "an interrupted wait says: look again";
  EXPECT_EQ(kv_->feed_count(), 0u) << "interrupt_waits() closes the watch streams";
  kv_.reset();  // a closed feed's coroutine outlives its Kv safely
  io_.restart();
  io_.run_for(100ms);
}

}  // namespace
}  // namespace ddprun::etcd::test
