// Multi-node end-to-end tests over a real (virtual) network (e2e/netns.hpp): two network
// namespaces joined by a veth pair, one agent in each, and the link of one node taken down
// mid-run. Root only.

#include <gtest/gtest.h>

#include "e2e/netns.hpp"

using namespace ddprun::test;
using namespace ddprun::test::multinode;

namespace {

/// Short keep-alive bounds, so a lost link shows within seconds.
constexpr const char* k_conf =
    "join_timeout=4,last_call_timeout=1,keep_alive_interval=1,keep_alive_max_attempt=2";

}  // namespace

TEST(MultinodeNetnsE2E, LinkDownWithoutRoomToShrinkFailsNamingTheLostNode) {
  DDPRUN_REQUIRE_NETNS(net);
  std::vector<std::string> dirs{make_temp_dir("ddprun-mn-ns-"), make_temp_dir("ddprun-mn-ns-")};
  Agents agents;
  start_pair(agents, net, "2", k_conf, dirs, dirs[0] + "/release");
  if (HasFatalFailure()) {
    return;
  }
  ASSERT_TRUE(net.set_link(1, false));
  EXPECT_EQ(agents.wait(0, k_event_timeout), 1) << agents.all_logs();
  EXPECT_TRUE(contains(agents.err(0), "expected 2 nodes, 1 arrived (" + net.addr(0) +
                                          "); lost since the previous round: " + net.addr(1)))
      << agents.err(0);
}

TEST(MultinodeNetnsE2E, LinkDownWithRoomToShrinkReformsAlone) {
  DDPRUN_REQUIRE_NETNS(net);
  std::vector<std::string> dirs{make_temp_dir("ddprun-mn-ns-"), make_temp_dir("ddprun-mn-ns-")};
  const std::string release = dirs[0] + "/release";
  Agents agents;
  start_pair(agents, net, "1:2", k_conf, dirs, release);
  if (HasFatalFailure()) {
    return;
  }
  ASSERT_TRUE(net.set_link(1, false));
  ASSERT_TRUE(eventually([&] { return last_start_has(dirs[0], "world", "1"); }, k_event_timeout))
      << agents.all_logs();
  EXPECT_TRUE(contains(agents.err(0), "lost " + net.addr(1))) << agents.err(0);
  // The cut-off agent's socket to the store cannot close while the link is down; stop it and
  // bring the link back so the survivor sees that connection end instead of lingering for it.
  agents.signal(1, SIGKILL);
  agents.wait(1, k_event_timeout);
  ASSERT_TRUE(net.set_link(1, true));
  touch(release);
  EXPECT_EQ(agents.wait(0), 0) << agents.all_logs();
  EXPECT_EQ(starts(dirs[0]).back()["restart"], "0") << "a lost node is not a failure restart";
}
