// rdzv::EtcdRun against a real etcd: which generation of an --rdzv-id an agent joins, and who
// removes a generation's keys.

#include "ddprun/rdzv/etcd_run.hpp"

#include "ddprun/etcd/codec.hpp"
#include "ddprun/rdzv/etcd_layout.hpp"
#include "ddprun/rdzv/state.hpp"

#include "etcd_fixture.hpp"

namespace ddprun::etcd::test {
namespace {

using namespace std::chrono_literals;
using rdzv::EtcdRun;
using rdzv::EtcdRunOptions;

class EtcdRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DDPRUN_SKIP_WITHOUT_ETCD();
    ASSERT_EQ(cluster_.start(), "");
    client_ = make_client(io_, cluster_.endpoints());
    ASSERT_TRUE(client_);
  }
  template <typename T>
  T run(asio::awaitable<T> co) {
    return run_co(io_, std::move(co));
  }
  std::unique_ptr<EtcdRun> open(const std::string& node, std::chrono::seconds ttl = 5s) {
    EtcdRunOptions o{"/t", "job", node, ttl, 5000ms, std::nullopt};
    auto r = run(EtcdRun::open(*client_, o));
    EXPECT_TRUE(r) << r.error().message;
    return r ? std::move(*r) : nullptr;
  }
  std::size_t keys_under(const std::string& prefix) {
    auto r = run(client_->range({prefix, prefix_end(prefix), 0, 0, true}));
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->kvs.size() : 0;
  }

  ::ddprun::test::EtcdCluster cluster_;
  asio::io_context io_{1};
  std::unique_ptr<Client> client_;
};

TEST_F(EtcdRunTest, AgentsOfOneJobShareAGenerationAndTheLastOneOutRemovesIt) {
  auto a = open("a");
  auto b = open("b");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->generation(), 1);
  EXPECT_EQ(b->generation(), 1);
  EXPECT_TRUE(run(a->kv().set(rdzv::state_key("job"), "x")));
  EXPECT_EQ(*run(b->kv().multi_get_now({rdzv::state_key("job")})), std::vector<std::string>{"x"});
  run(a->finish());
  EXPECT_GT(keys_under("/t/job/"), 0u) << "b is still in the generation";
  run(b->finish());
  EXPECT_EQ(keys_under("/t/job/"), 0u);
}

// Issue #23: the survivors of a killed agent finish the job before its lease runs out (they
// found it dead by its silent heartbeat first). The last one out must still remove the run.
TEST_F(EtcdRunTest, TheLastOneOutOfAnEndedJobWaitsForADeadAgentsLeaseThenRemovesTheRun) {
  auto live = open("live");
  {
    auto dead = open("dead", 2s);
    ASSERT_TRUE(live && dead);
    EXPECT_EQ(dead->generation(), live->generation());
    // Dies without finish(): its alive key stays until its lease runs out.
  }
  EXPECT_GT(keys_under("/t/job/g1/alive/"), 0u);
  run(live->finish(EtcdRun::Leaving::job_ended));
  EXPECT_EQ(keys_under("/t/job/"), 0u) << "the run's keys outlived the job";
}

TEST_F(EtcdRunTest, ACrashedJobsGenerationIsReplacedOnceItsLeasesExpire) {
  {
    EtcdRunOptions o{"/t", "job", "dead", 2s, 5000ms, std::nullopt};
    auto crashed = run(EtcdRun::open(*client_, o));
    ASSERT_TRUE(crashed);
    EXPECT_TRUE(run((*crashed)->kv().set(rdzv::state_key("job"), "stale")));
    // Dies without finish(): the keeper stops with the object, the lease runs out.
  }
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (keys_under("/t/job/g1/alive/") > 0 && std::chrono::steady_clock::now() < deadline) {
    asio::steady_timer poll(io_, 200ms);
    run_co(io_, [&]() -> asio::awaitable<void> {
      boost::system::error_code ec;
      co_await poll.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }());
  }
  auto next = open("fresh");
  ASSERT_TRUE(next);
  EXPECT_EQ(next->generation(), 2);
  EXPECT_EQ(keys_under("/t/job/g1/"), 0u) << "the dead generation was deleted";
  EXPECT_EQ(*run(next->kv().multi_get_now({rdzv::state_key("job")})), std::vector<std::string>{""});
  run(next->finish());
}

TEST_F(EtcdRunTest, AClosedGenerationIsNotJoinedEvenWhileItsAgentsLeave) {
  auto old = open("old");
  ASSERT_TRUE(old);
  rdzv::RoundHeader closed;
  closed.closed = true;
  EXPECT_TRUE(run(old->kv().set(rdzv::state_key("job"), rdzv::encode_header(closed))));
  auto fresh = open("fresh");
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->generation(), 2);
  run(old->finish());  // the last one out of generation 1 removes it, not generation 2
  EXPECT_EQ(keys_under("/t/job/g1/"), 0u);
  EXPECT_GT(keys_under("/t/job/g2/"), 0u);
  run(fresh->finish());
  EXPECT_EQ(keys_under("/t/job/"), 0u);
}

TEST_F(EtcdRunTest, ARunningGenerationWithoutKeepAlivesIsTakenForDead) {
  // A job killed a moment ago: its leases still live, but nobody beats any more.
  auto crashed = open("crashed", 30s);
  ASSERT_TRUE(crashed);
  rdzv::RoundHeader running;
  running.phase = rdzv::Phase::complete;
  running.members = 1;
  EXPECT_TRUE(run(crashed->kv().set(rdzv::state_key("job"), rdzv::encode_header(running))));
  EtcdRunOptions o{"/t", "job", "fresh", 5s, 5000ms, std::nullopt, 1000ms};
  const auto t0 = std::chrono::steady_clock::now();
  auto fresh = run(EtcdRun::open(*client_, o));
  ASSERT_TRUE(fresh) << fresh.error().message;
  EXPECT_EQ((*fresh)->generation(), 2);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 4s);
  EXPECT_EQ(keys_under("/t/job/g1/"), 0u);
  run((*fresh)->finish());
  run(crashed->finish());
}

TEST_F(EtcdRunTest, ARunningGenerationThatBeatsIsJoined) {
  auto live = open("live");
  ASSERT_TRUE(live);
  rdzv::RoundHeader running;
  running.phase = rdzv::Phase::complete;
  running.members = 1;
  EXPECT_TRUE(run(live->kv().set(rdzv::state_key("job"), rdzv::encode_header(running))));
  EtcdRunOptions o{"/t", "job", "late", 5s, 5000ms, std::nullopt, 3000ms};
  std::optional<Result<std::unique_ptr<EtcdRun>>> late;
  asio::co_spawn(io_, into(EtcdRun::open(*client_, o), late), asio::detached);
  asio::steady_timer beat(io_, 300ms);
  beat.async_wait([&](const boost::system::error_code&) {
    asio::co_spawn(
        io_,
        [&]() -> asio::awaitable<void> {
          (void)co_await live->kv().set(rdzv::heartbeat_key("job", "live"), "1");
        },
        asio::detached);
  });
  while (!late && io_.run_one() > 0) {
  }
  ASSERT_TRUE(late && *late) << (late ? late->error().message : "not done");
  EXPECT_EQ((**late)->generation(), 1);
  run((**late)->finish());
  run(live->finish());
}

TEST_F(EtcdRunTest, OnlyTheAgentsOwnKeysCarryItsLease) {
  auto a = open("a");
  ASSERT_TRUE(a);
  EXPECT_TRUE(run(a->kv().set(rdzv::heartbeat_key("job", "a"), "1")));
  EXPECT_TRUE(run(a->kv().set(rdzv::state_key("job"), "s")));
  auto hb = run(client_->get("/t/job/g1/" + rdzv::heartbeat_key("job", "a")));
  auto state = run(client_->get("/t/job/g1/" + rdzv::state_key("job")));
  ASSERT_TRUE(hb && *hb && state && *state);
  EXPECT_NE((*hb)->lease, 0);
  EXPECT_EQ((*state)->lease, 0);
  run(a->finish());
}

TEST_F(EtcdRunTest, SignedWithTheTokenWhenThereIsOne) {
  EtcdRunOptions o{"/t", "job", "a", 5s, 5000ms, std::string("secret")};
  auto a = run(EtcdRun::open(*client_, o));
  ASSERT_TRUE(a);
  EXPECT_TRUE(run((*a)->kv().set(rdzv::state_key("job"), "s")));
  auto raw = run(client_->get("/t/job/g1/" + rdzv::state_key("job")));
  ASSERT_TRUE(raw && *raw);
  EXPECT_NE((*raw)->value, "s");
  EXPECT_EQ(*run((*a)->kv().multi_get_now({rdzv::state_key("job")})),
            std::vector<std::string>{"s"});
  run((*a)->finish());
}

// A node left out before any other agent arrived is the last one out of its generation: it
// keeps it, and the next agent to start the run carries its record into the new generation.
TEST_F(EtcdRunTest, ALeftOutNodesRecordOutlivesItsGenerationUntilTheJobEnds) {
  EtcdRunOptions o{"/t", "job", "bad", 5s, 5000ms, std::string("secret")};
  auto bad = run(EtcdRun::open(*client_, o));
  ASSERT_TRUE(bad);
  rdzv::RoundHeader left_out;
  left_out.excluded.push_back(rdzv::Exclusion{"bad", 0, 0, "health check failed"});
  const auto key = rdzv::state_key("job");
  EXPECT_TRUE(run((*bad)->kv().set(key, rdzv::encode_header(left_out))));
  run((*bad)->finish(EtcdRun::Leaving::left_out));
  EXPECT_EQ(keys_under("/t/job/g1/alive/"), 0u);
  EXPECT_GT(keys_under("/t/job/g1/"), 0u) << "the record went with the last agent";

  o.node_id = "good";
  auto good = run(EtcdRun::open(*client_, o));
  ASSERT_TRUE(good);
  EXPECT_EQ((*good)->generation(), 2);
  EXPECT_EQ(keys_under("/t/job/g1/"), 0u) << "the left generation was deleted";
  auto header = run((*good)->kv().multi_get_now({key}));  // signed, so it verifies
  ASSERT_TRUE(header) << header.error().message;
  auto h = rdzv::decode_header(header->front());
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(h->excluded, left_out.excluded);
  EXPECT_EQ(h->round, 0);

  rdzv::RoundHeader ended = *h;  // the job ends: the next one under this id starts bare
  ended.closed = true;
  EXPECT_TRUE(run((*good)->kv().set(key, rdzv::encode_header(ended))));
  o.node_id = "next";
  auto next = run(EtcdRun::open(*client_, o));
  ASSERT_TRUE(next);
  EXPECT_EQ((*next)->generation(), 3);
  EXPECT_EQ(*run((*next)->kv().multi_get_now({key})), std::vector<std::string>{""});
  run((*good)->finish());
  run((*next)->finish());
}

TEST_F(EtcdRunTest, ALostLeaseIsReplacedAndTheAgentsKeysAreWrittenAgain) {
  auto a = open("a", 3s);  // renewed every second
  ASSERT_TRUE(a);
  const std::string hb = "/t/job/g1/" + rdzv::heartbeat_key("job", "a");
  EXPECT_TRUE(run(a->kv().set(rdzv::heartbeat_key("job", "a"), "1")));
  const auto lost = a->lease_id();
  ASSERT_TRUE(run(client_->lease_revoke(lost)));  // as etcd does when the lease expires
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  std::optional<KeyValue> back;
  while (std::chrono::steady_clock::now() < deadline) {
    io_.restart();
    io_.run_for(100ms);
    auto got = run(client_->get(hb));
    if (got && *got && (*got)->lease != lost) {
      back = **got;
      break;
    }
  }
  ASSERT_TRUE(back) << "the heartbeat key did not come back";
  EXPECT_EQ(back->value, "1");
  EXPECT_EQ(back->lease, a->lease_id());
  EXPECT_NE(a->lease_id(), lost);
  EXPECT_EQ(keys_under("/t/job/g1/alive/"), 1u);
  run(a->finish());
  EXPECT_EQ(keys_under("/t/job/"), 0u) << "the new lease was revoked with the rest";
}

}  // namespace
}  // namespace ddprun::etcd::test
