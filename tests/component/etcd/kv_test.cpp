// kv, txn, lease and watch against one real etcd member (started once for the suite).

#include "ddprun/etcd/codec.hpp"

#include <thread>

#include "etcd_fixture.hpp"

namespace ddprun::etcd::test {
namespace {

using namespace std::chrono_literals;

class EtcdKv : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!::ddprun::test::EtcdCluster::unavailable_reason().empty()) {
      return;
    }
    cluster_ = new ::ddprun::test::EtcdCluster();
    start_error_ = new std::string(cluster_->start());
  }
  static void TearDownTestSuite() {
    delete cluster_;
    delete start_error_;
    cluster_ = nullptr;
    start_error_ = nullptr;
  }
  void SetUp() override {
    DDPRUN_SKIP_WITHOUT_ETCD();
    ASSERT_TRUE(start_error_->empty()) << *start_error_;
    client_ = make_client(io_, cluster_->endpoints());
    ASSERT_TRUE(client_);
  }
  template <typename T>
  T run(asio::awaitable<T> co) {
    return run_co(io_, std::move(co));
  }

  static ::ddprun::test::EtcdCluster* cluster_;
  static std::string* start_error_;
  asio::io_context io_{1};
  std::unique_ptr<Client> client_;
};

::ddprun::test::EtcdCluster* EtcdKv::cluster_ = nullptr;
std::string* EtcdKv::start_error_ = nullptr;

TEST_F(EtcdKv, PutThenRangeOneKeyAndPrefixWithBinaryBytes) {
  const std::string value("v\0\xff\n", 4);
  auto rev = run(client_->put({"/kv/a", value, 0}));
  ASSERT_TRUE(rev) << rev.error().message;
  ASSERT_TRUE(run(client_->put({"/kv/b", "2", 0})));
  ASSERT_TRUE(run(client_->put({"/kw", "outside", 0})));

  auto one = run(client_->get("/kv/a"));
  ASSERT_TRUE(one) << one.error().message;
  ASSERT_TRUE(one->has_value());
  EXPECT_EQ((*one)->value, value);
  EXPECT_EQ((*one)->mod_revision, *rev);

  auto prefix = run(client_->range({"/kv/", prefix_end("/kv/"), 0, 0, false}));
  ASSERT_TRUE(prefix);
  ASSERT_EQ(prefix->kvs.size(), 2U);
  EXPECT_EQ(prefix->kvs[1].key, "/kv/b");
  EXPECT_GE(prefix->revision, *rev);

  auto missing = run(client_->get("/kv/none"));
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->has_value());

  auto gone = run(client_->erase({"/kv/", prefix_end("/kv/")}));
  ASSERT_TRUE(gone);
  EXPECT_EQ(gone->deleted, 2);
}

TEST_F(EtcdKv, TxnCreateIfAbsentAndCompareAndSwap) {
  // Create if absent: the first wins, the second sees the winner's value in the same trip.
  auto create = [&](const std::string& v) {
    return run(client_->txn({{key_absent("/cas/k")},
                             {TxnOp::set({"/cas/k", v, 0})},
                             {TxnOp::get({"/cas/k", {}, 0, 0, false})}}));
  };
  auto first = create("one");
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_TRUE(first->succeeded);
  auto second = create("two");
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_FALSE(second->succeeded);
  ASSERT_EQ(second->responses.size(), 1U);
  const KeyValue current = second->responses[0].range.kvs.at(0);
  EXPECT_EQ(current.value, "one");

  // Compare-and-swap on mod_revision: succeeds once, then the stale revision fails.
  auto swap = [&](Revision seen, const std::string& v) {
    return run(client_->txn({{key_unchanged("/cas/k", seen)}, {TxnOp::set({"/cas/k", v, 0})}, {}}));
  };
  auto swapped = swap(current.mod_revision, "three");
  ASSERT_TRUE(swapped);
  EXPECT_TRUE(swapped->succeeded);
  EXPECT_GT(swapped->revision, current.mod_revision);
  auto stale = swap(current.mod_revision, "four");
  ASSERT_TRUE(stale);
  EXPECT_FALSE(stale->succeeded);

  // Compare on the value itself.
  auto by_value =
      run(client_->txn({{value_is("/cas/k", "three")}, {TxnOp::erase({"/cas/k", {}})}, {}}));
  ASSERT_TRUE(by_value);
  EXPECT_TRUE(by_value->succeeded);
  EXPECT_EQ(by_value->responses.at(0).deleted, 1);
}

TEST_F(EtcdKv, ExpiredLeaseRemovesItsKeysAndKeeperKeepsThem) {
  auto short_lease = run(client_->lease_grant(1s, 0));
  ASSERT_TRUE(short_lease) << short_lease.error().message;
  auto kept_lease = run(client_->lease_grant(1s, new_lease_id()));
  ASSERT_TRUE(kept_lease);
  ASSERT_TRUE(run(client_->put({"/lease/short", "x", short_lease->id})));
  ASSERT_TRUE(run(client_->put({"/lease/kept", "y", kept_lease->id})));
  std::optional<Error> lost;
  LeaseKeeper keeper(*client_, *kept_lease, [&](const Error& e) { lost = e; });
  keeper.start();

  const auto deadline = std::chrono::steady_clock::now() + 6s;
  bool expired = false;
  while (!expired && std::chrono::steady_clock::now() < deadline) {
    asio::steady_timer pause(io_, 200ms);
    run(pause.async_wait(asio::use_awaitable));
    auto r = run(client_->get("/lease/short"));
    ASSERT_TRUE(r);
    expired = !r->has_value();
  }
  EXPECT_TRUE(expired) << "the key of an unrenewed 1 s lease still exists after 6 s";
  auto kept = run(client_->get("/lease/kept"));
  ASSERT_TRUE(kept);
  EXPECT_TRUE(kept->has_value()) << "the keeper did not keep its lease alive";
  EXPECT_FALSE(lost.has_value());
  run(keeper.stop());
  EXPECT_FALSE(keeper.is_running());

  auto renewed = run(client_->lease_keepalive_once(short_lease->id));
  ASSERT_TRUE(renewed);
  EXPECT_EQ(renewed->ttl.count(), 0) << "an expired lease renews with TTL 0";
  ASSERT_TRUE(run(client_->lease_revoke(kept_lease->id)));
  auto revoked = run(client_->get("/lease/kept"));
  ASSERT_TRUE(revoked);
  EXPECT_FALSE(revoked->has_value());
  auto again = run(client_->lease_revoke(kept_lease->id));
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message.find("requested lease not found"), std::string::npos)
      << again.error().message;
}

TEST_F(EtcdKv, AGrantSentAgainFindsTheLeaseItMadeInsteadOfMakingAnother) {
  const auto id = new_lease_id();
  auto first = run(client_->lease_grant(30s, id));
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->id, id);
  ASSERT_TRUE(run(client_->put({"/grant/k", "v", id})));
  // As when the first answer was lost and the grant is sent again.
  auto again = run(client_->lease_grant(30s, id));
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->id, id);
  EXPECT_GT(again->ttl.count(), 0);
  auto kept = run(client_->get("/grant/k"));
  ASSERT_TRUE(kept);
  ASSERT_TRUE(kept->has_value());
  EXPECT_EQ((*kept)->lease, id);
  ASSERT_TRUE(run(client_->lease_revoke(id)));
}

TEST_F(EtcdKv, KeeperReportsALeaseThatWasRevoked) {
  auto lease = run(client_->lease_grant(1s, new_lease_id()));
  ASSERT_TRUE(lease);
  std::optional<Error> lost;
  LeaseKeeper keeper(*client_, *lease, [&](const Error& e) { lost = e; });
  keeper.start();
  ASSERT_TRUE(run(client_->lease_revoke(lease->id)));
  const auto deadline = std::chrono::steady_clock::now() + 3s;
  while (!lost && std::chrono::steady_clock::now() < deadline) {
    io_.restart();
    io_.run_one_for(100ms);
  }
  ASSERT_TRUE(lost.has_value());
  EXPECT_EQ(lost->message, "etcd lease " + std::to_string(lease->id) + " expired");
  EXPECT_TRUE(keeper.is_lost());
  run(keeper.stop());
}

TEST_F(EtcdKv, WatchSeesPutAndDeleteOnAPrefixThenCancels) {
  auto w = run(client_->watch({"/w/", prefix_end("/w/"), 0, false}));
  ASSERT_TRUE(w) << w.error().message;
  Watch& watch = **w;
  auto put = run(client_->put({"/w/n1", "hi", 0}));
  ASSERT_TRUE(put);
  ASSERT_TRUE(run(client_->erase({"/w/n1", {}})));

  std::vector<WatchEvent> events;
  while (events.size() < 2) {
    auto m = run(watch.next());
    ASSERT_TRUE(m) << m.error().message;
    events.insert(events.end(), m->events.begin(), m->events.end());
  }
  EXPECT_EQ(events[0].type, WatchEvent::Type::put);
  EXPECT_EQ(events[0].kv.key, "/w/n1");
  EXPECT_EQ(events[0].kv.value, "hi");
  EXPECT_EQ(events[0].kv.mod_revision, *put);
  EXPECT_EQ(events[1].type, WatchEvent::Type::del);
  EXPECT_EQ(events[1].kv.key, "/w/n1");

  // Cancelled while next() waits: next() ends with ErrorCode::closed.
  std::optional<Result<WatchMessage>> pending;
  asio::co_spawn(io_, into(watch.next(), pending), asio::detached);
  io_.restart();
  io_.poll();
  watch.cancel();
  while (!pending) {
    io_.run_one();
  }
  ASSERT_FALSE(*pending);
  EXPECT_EQ(pending->error().code, ErrorCode::closed);
}

TEST_F(EtcdKv, WatchFromAnOldRevisionReplaysAndCompactionCancels) {
  auto first = run(client_->put({"/wr/k", "1", 0}));
  ASSERT_TRUE(first);
  ASSERT_TRUE(run(client_->put({"/wr/k", "2", 0})));
  auto w = run(client_->watch({"/wr/k", {}, *first, false}));
  ASSERT_TRUE(w) << w.error().message;
  auto m = run((*w)->next());
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_FALSE(m->events.empty());
  EXPECT_EQ(m->events[0].kv.value, "1");

  auto last = run(client_->put({"/wr/k", "3", 0}));
  ASSERT_TRUE(last);
  ASSERT_EQ(cluster_->etcdctl({"compaction", std::to_string(*last)}), "");
  auto old = run(client_->watch({"/wr/k", {}, *first, false}));
  ASSERT_TRUE(old) << old.error().message;
  auto cancel = run((*old)->next());
  ASSERT_TRUE(cancel) << cancel.error().message;
  EXPECT_TRUE(cancel->canceled);
  EXPECT_EQ(cancel->compact_revision, *last);
  auto after = run((*old)->next());
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error().code, ErrorCode::closed);
}

TEST_F(EtcdKv, EtcdRefusalIsOneLineWithItsCode) {
  auto r = run(client_->lease_keepalive_once(0));
  // Lease 0 does not exist: etcd answers with no TTL, or refuses.
  if (r) {
    EXPECT_EQ(r->ttl.count(), 0);
  }
  auto bad = run(client_->range({"", {}, 0, 0, false}));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::protocol);
  EXPECT_EQ(bad.error().message.find('\n'), std::string::npos);
  EXPECT_NE(bad.error().message.find("etcd /v3/kv/range at http://127.0.0.1:"), std::string::npos)
      << bad.error().message;
}

}  // namespace
}  // namespace ddprun::etcd::test
