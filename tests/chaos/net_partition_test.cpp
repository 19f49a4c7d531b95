// Network partition (issue #8, docs/reliability.md, scenario 3): the store host in one
// network namespace, a peer in another (e2e/netns.hpp), and the peer's veth taken down while
// both run. Root only. The measured times are printed ("[measured] ..."), never asserted.

#include <gtest/gtest.h>

#include "chaos/measured.hpp"
#include "e2e/netns.hpp"

using namespace ddprun::test;
using namespace ddprun::test::multinode;
using namespace ddprun::test::chaos;

namespace {

const std::string k_conf =
    "join_timeout=4,last_call_timeout=1,keep_alive_interval=1,keep_alive_max_attempt=2";

}  // namespace

// The side with the store (room to shrink: 1:2) drops the cut-off node after the keep-alive
// bound and goes on alone; the cut-off node cannot reach the store, so it stops its worker and
// exits 1 naming the endpoint, on its own (no signal from the test), instead of hanging.
TEST(ChaosNet, PartitionedNodeFailsNamingTheEndpointWhileTheStoreSideGoesOn) {
  DDPRUN_REQUIRE_NETNS(net);
  std::vector<std::string> dirs{make_temp_dir("ddprun-chaos-ns-"),
                                make_temp_dir("ddprun-chaos-ns-")};
  const std::string release = dirs[0] + "/release";
  const std::string endpoint = net.addr(0) + ":" + std::to_string(k_netns_port);
  const std::vector<std::string> tags{unique_tag(), unique_tag()};
  Agents agents;
  start_pair(agents, net, "1:2", k_conf, dirs, release, tags);
  if (HasFatalFailure()) {
    return;
  }

  const auto t0 = Steady::now();
  ASSERT_TRUE(net.set_link(1, false));
  ASSERT_TRUE(eventually([&] { return last_start_has(dirs[0], "world", "1"); }, k_event_timeout))
      << agents.all_logs();
  report("link down -> store side restarted alone", seconds_since(t0));
  EXPECT_TRUE(contains(agents.err(0), "lost " + net.addr(1))) << agents.err(0);

  EXPECT_EQ(agents.wait(1, k_event_timeout), 1) << agents.all_logs();
  report("link down -> cut-off agent exited", seconds_since(t0));
  EXPECT_TRUE(contains(agents.err(1), "lost the rendezvous store")) << agents.err(1);
  EXPECT_TRUE(contains(agents.err(1), endpoint)) << agents.err(1);
  EXPECT_TRUE(eventually([&] { return processes_with_env(tags[1]).empty(); }, k_event_timeout))
      << "the cut-off agent left its worker behind";

  // Link back up, so the store host sees the cut-off agent's connections end when it lingers
  // for its peers at exit.
  ASSERT_TRUE(net.set_link(1, true));
  touch(release);
  EXPECT_EQ(agents.wait(0), 0) << agents.all_logs();
  EXPECT_EQ(starts(dirs[0]).back()["restart"], "0") << "a lost node is not a failure restart";
}
