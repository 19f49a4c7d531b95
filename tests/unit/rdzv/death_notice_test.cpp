#include "ddprun/rdzv/death_notice.hpp"

#include "ddprun/rdzv/decide.hpp"

#include <gtest/gtest.h>

using namespace ddprun::rdzv;

namespace {

DeathNotice store_notice() {
  DeathNotice n;
  n.run_id = "job";
  n.node_id = "127.0.0.3_1234_0";
  n.round = 3;
  n.host = "127.0.0.1";
  n.port = 29400;
  return n;
}

DeathNotice etcd_notice() {
  DeathNotice n;
  n.backend = DeathNotice::Backend::etcd_v3;
  n.run_id = "job";
  n.node_id = "10.0.0.2_77_0";
  n.token = "s3cret";
  n.members = "https://e1:2379,https://e2:2379";
  n.ca_file = "/etc/ca.pem";
  n.cert_file = "/etc/c.pem";
  n.key_file = "/etc/k.pem";
  n.username = "root";
  n.password = "pw\"with quotes";
  n.key_prefix = "/torchelastic/p2p";
  n.generation = 4;
  n.lease = 7587869138203158795;
  return n;
}

RoundHeader complete(int round) {
  RoundHeader h;
  h.round = round;
  h.phase = Phase::complete;
  h.size = 2;
  h.members = 2;
  return h;
}

}  // namespace

TEST(DeathNotice, RoundTripsBothBackends) {
  for (const auto& n : {store_notice(), etcd_notice()}) {
    auto back = decode_notice(encode_notice(n));
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(*back, n);
  }
  auto joining = store_notice();
  joining.round.reset();
  auto back = decode_notice(encode_notice(joining));
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->round);
}

TEST(DeathNotice, RejectsWhatItDidNotWrite) {
  for (const char* text : {"", "{", "[]", "{\"v\":2}", "{\"v\":1,\"backend\":\"zk\"}",
                           "{\"v\":1,\"backend\":\"store\",\"run_id\":\"j\"}"}) {
    auto got = decode_notice(text);
    ASSERT_FALSE(got) << text;
    EXPECT_NE(got.error().message.find("bad death notice"), std::string::npos);
  }
}

TEST(DeathNotice, EndsTheNamedCompleteRoundWithTheNodeLost) {
  auto n = store_notice();
  auto next = with_node_dead(complete(3), n);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->round, 4);
  EXPECT_EQ(next->phase, Phase::joining);
  EXPECT_EQ(next->ended.lost, std::vector<std::string>{n.node_id});
  EXPECT_TRUE(next->ended.left.empty());
}

TEST(DeathNotice, AStaleNoticeChangesNothing) {
  auto n = store_notice();
  EXPECT_FALSE(with_node_dead(complete(4), n));  // the round moved on
  EXPECT_FALSE(with_node_dead(complete(2), n));
  auto joining = complete(3);
  joining.phase = Phase::joining;
  EXPECT_FALSE(with_node_dead(joining, n));
  auto closed = complete(3);
  closed.closed = true;
  EXPECT_FALSE(with_node_dead(closed, n));  // the job ended
  n.round.reset();
  EXPECT_FALSE(with_node_dead(complete(3), n));  // it was joining
}

TEST(DeathNotice, ItsHeartbeatReadsAsSilent) {
  RdzvSettings s;
  EXPECT_TRUE(is_silent(parse_heartbeat(k_dead_heartbeat), 1'700'000'000'000, s));
}

TEST(DeathNotice, DescribesWhereItTold) {
  EXPECT_EQ(describe_rendezvous(store_notice()), "rendezvous 'job' at 127.0.0.1:29400");
  EXPECT_EQ(describe_rendezvous(etcd_notice()),
            "rendezvous 'job' in etcd https://e1:2379,https://e2:2379");
}
