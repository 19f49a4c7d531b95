// Which rendezvous a launch gets and who hosts its store, from the resolved config alone.

#include "ddprun/config/rendezvous_policy.hpp"

#include <gtest/gtest.h>

namespace ddprun::config {
namespace {

LaunchConfig c10d(int max_nodes, std::string host, int port) {
  LaunchConfig cfg;
  cfg.rdzv.rdzv_backend = RdzvBackend::c10d;
  cfg.rdzv.nnodes = {1, max_nodes};
  cfg.rdzv.rdzv_endpoint = {std::move(host), port};
  return cfg;
}

LaunchConfig static_job(int nodes, int node_rank) {
  LaunchConfig cfg;
  cfg.rdzv.rdzv_backend = RdzvBackend::static_;
  cfg.rdzv.nnodes = {nodes, nodes};
  cfg.rdzv.node_rank = node_rank;
  cfg.rdzv.master_addr = "head";
  cfg.rdzv.master_port = 29511;
  return cfg;
}

TEST(RendezvousPolicy, WhichJobsAreOneNodeAlone) {
  struct Row {
    LaunchConfig cfg;
    bool alone;
    const char* why;
  } rows[] = {
      {static_job(1, 0), true, "static, one node"},
      {static_job(2, 0), false, "static, two nodes"},
      {c10d(1, "", 29400), true, "c10d without an endpoint"},
      {c10d(1, "localhost", 0), true, "c10d on port 0 (torchtitan's localhost:0)"},
      {c10d(1, "head", 29400), false, "c10d, one node, a real endpoint"},
      {c10d(4, "head", 29400), false, "c10d, up to four nodes"},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(is_single_node(r.cfg.rdzv), r.alone) << r.why;
  }
  auto standalone = c10d(4, "head", 29400);
  standalone.rdzv.standalone = true;
  EXPECT_TRUE(is_single_node(standalone.rdzv));
  auto etcd = c10d(1, "", 2379);
  etcd.rdzv.rdzv_backend = RdzvBackend::etcd_v3;
  EXPECT_FALSE(is_single_node(etcd.rdzv)) << "etcd-v3's rendezvous is in etcd even for one node";
}

TEST(RendezvousPolicy, TheStoreIsAtTheMasterForStaticAndTheEndpointForC10d) {
  const auto st = store_endpoint(static_job(2, 1).rdzv);
  EXPECT_EQ(st.host, "head");
  EXPECT_EQ(st.port, 29511);
  const auto named = store_endpoint(c10d(2, "node7", 29401).rdzv);
  EXPECT_EQ(named.host, "node7");
  EXPECT_EQ(named.port, 29401);
  EXPECT_EQ(store_endpoint(c10d(2, "", 29400).rdzv).host, "localhost");
}

TEST(RendezvousPolicy, StaticNodeZeroHostsAndSaysSo) {
  const auto zero = hosting_choice(static_job(2, 0).rdzv, false);
  EXPECT_TRUE(zero.host);
  EXPECT_TRUE(zero.asked);
  const auto one = hosting_choice(static_job(2, 1).rdzv, true);
  EXPECT_FALSE(one.host) << "node 1 never hosts, even on the master's machine";
  EXPECT_TRUE(one.asked);
}

TEST(RendezvousPolicy, C10dHostsWhereTheEndpointIsLocalUnlessIsHostSays) {
  const auto local = hosting_choice(c10d(2, "head", 29400).rdzv, true);
  EXPECT_TRUE(local.host);
  EXPECT_FALSE(local.asked) << "a lost race for the port means another agent hosts it";
  EXPECT_FALSE(hosting_choice(c10d(2, "head", 29400).rdzv, false).host);
  for (const auto& [word, host] : {std::pair{"1", true}, {"yes", true}, {"0", false}}) {
    auto cfg = c10d(2, "head", 29400);
    cfg.rdzv.rdzv_conf["is_host"] = word;
    const auto choice = hosting_choice(cfg.rdzv, !host);
    EXPECT_EQ(choice.host, host) << word;
    EXPECT_TRUE(choice.asked) << word;
  }
}

TEST(RendezvousPolicy, IsHostIsABoolWordOrAnErrorNamingTheItem) {
  auto cfg = c10d(2, "head", 29400);
  auto absent = read_is_host(cfg.rdzv);
  ASSERT_TRUE(absent);
  EXPECT_FALSE(absent->has_value());
  cfg.rdzv.rdzv_conf["is_host"] = "no";
  auto no = read_is_host(cfg.rdzv);
  ASSERT_TRUE(no && no->has_value());
  EXPECT_FALSE(**no);
  cfg.rdzv.rdzv_conf["is_host"] = "maybe";
  auto bad = read_is_host(cfg.rdzv);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "'is_host=maybe': expected is_host=1, true, t, yes, y or 0, false, f, no, n");
}

TEST(RendezvousPolicy, ALoopbackAddressListensEverywhereOnlyForRemotePeers) {
  EXPECT_TRUE(listens_everywhere(c10d(2, "myhost", 29400).rdzv, true, false))
      << "Debian's hostname at 127.0.1.1, peers on other machines";
  EXPECT_FALSE(listens_everywhere(c10d(2, "127.0.0.1", 29400).rdzv, true, true))
      << "a loopback name: every peer is on this machine";
  EXPECT_FALSE(listens_everywhere(c10d(1, "myhost", 29400).rdzv, true, false)) << "one node";
  EXPECT_FALSE(listens_everywhere(c10d(2, "myhost", 29400).rdzv, false, false)) << "a real address";
}

}  // namespace
}  // namespace ddprun::config
