// Hot spares on etcd-v3 (#27 §3): the scenarios of spares_scenario.hpp against a real etcd on
// loopback.

#include <gtest/gtest.h>

#include <regex>

#include "spares_scenario.hpp"
#include "support/etcd_cluster.hpp"

using namespace ddprun::test;
using namespace ddprun::test::multinode;

namespace {

class EtcdSparesE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    DDPRUN_SKIP_WITHOUT_ETCD();
    ASSERT_EQ(cluster_.start(), "");
  }
  SpareJob job(const std::string& id) const { return etcd_job("2:2", cluster_.endpoints(), id); }
  EtcdCluster cluster_;
};

TEST_F(EtcdSparesE2E, SpareTakesThePlaceOfANodeThatKeepsFailing) {
  expect_spare_replaces_failing_node(job("spare-fail"));
}

TEST_F(EtcdSparesE2E, SpareTakesThePlaceOfAKilledAgent) {
  expect_spare_replaces_killed_node(job("spare-kill"));
}

// Issue #43: the frozen member, continued after the job finished, reads the end record the last
// agent out left (or the closed header) and exits 0 at once, saying when the job finished and
// when it was dropped; it starts no new run (before: round 0 of a new one, waited out its join
// timeout, exit 1).
TEST_F(EtcdSparesE2E, AMemberFrozenPastItsLeaseLearnsTheJobFinishedWithoutIt) {
  SpareAgents s;
  freeze_member_until_the_job_ends(job("spare-back"), s);
  if (HasFatalFailure()) {
    return;
  }
  EXPECT_EQ(continue_frozen_member(s), 0) << s.agents.all_logs();
  EXPECT_TRUE(std::regex_search(
      s.agents.err(1),
      std::regex("rendezvous spare-back: the job finished at [0-9:]{8} without this node \\(it "
                 "was dropped at [0-9:]{8}: no keep-alive of it reached the store for 2s\\); "
                 "this agent exits with status 0")))
      << s.agents.err(1);
}

}  // namespace
