// Hot spares on c10d (#27 §3): a fixed-size job with a third agent standing by. The etcd-v3
// cases are in spares_etcd_e2e_test.cpp.

#include <gtest/gtest.h>

#include "spares_scenario.hpp"

using namespace ddprun::test;
using namespace ddprun::test::multinode;

namespace {

SpareJob c10d_job(const std::string& id) { return multinode::c10d_job("2:2", id); }

TEST(SparesE2E, C10dSpareTakesThePlaceOfANodeThatKeepsFailing) {
  expect_spare_replaces_failing_node(c10d_job("spare-fail"));
}

TEST(SparesE2E, C10dSpareTakesThePlaceOfAKilledAgent) {
  expect_spare_replaces_killed_node(c10d_job("spare-kill"));
}

TEST(SparesE2E, C10dSpareThatWasNotNeededExitsZeroWhenTheJobEnds) {
  expect_unneeded_spare_exits_zero(c10d_job("spare-idle"));
}

// Issue #43 on c10d: the store lived in agent 0, which exited when the job finished (after
// lingering while peers stayed connected), so the frozen member, continued, finds no store. It
// cannot tell a finished job from a store host that died: it says so in one line within seconds
// (the store client gives up after the keep-alive bound) and exits 1, starting no new run.
TEST(SparesE2E, C10dMemberFrozenUntilTheJobEndedSaysTheStoreIsGoneAndExitsOne) {
  SpareAgents s;
  freeze_member_until_the_job_ends(c10d_job("spare-back"), s);
  if (HasFatalFailure()) {
    return;
  }
  EXPECT_EQ(continue_frozen_member(s), 1) << s.agents.all_logs();
  EXPECT_TRUE(contains(s.agents.err(1),
                       "the agent that hosted the store has exited, because the job ended "
                       "or because that agent failed"))
      << s.agents.err(1);
}

TEST(SparesE2E, C10dSpareWhoseHealthCheckFailsWhileItWaitsWithdraws) {
  const std::string sick = make_temp_dir("ddprun-spare-sick-") + "/sick";
  expect_unhealthy_spare_withdraws(c10d_job("spare-sick"), sick);
}

}  // namespace
