#include "ddprun/etcd/renewal.hpp"

#include <gtest/gtest.h>

namespace ddprun::etcd {
namespace {

using namespace std::chrono_literals;

const RenewalSchedule k_fifteen{15s};

TEST(RenewalSchedule, AnAnsweredRenewalIsFollowedByTheNextAfterAThirdOfTheTtlOrABitMore) {
  EXPECT_EQ(k_fifteen.after_renewed(0.5), 5000ms);
  EXPECT_EQ(k_fifteen.after_renewed(1.0), 5625ms);
  EXPECT_EQ(k_fifteen.after_renewed(1.5), 6250ms);
  EXPECT_EQ(k_fifteen.after_renewed(9.0), 6250ms) << "a spread out of range is clamped";
  EXPECT_EQ(RenewalSchedule{300ms}.after_renewed(1.0), 200ms) << "never more often than 5 a second";
}

TEST(RenewalSchedule, AnUnansweredRenewalIsTriedAgainSoonThenLessOften) {
  EXPECT_EQ(k_fifteen.after_failed(1, 1.0), 250ms);
  EXPECT_EQ(k_fifteen.after_failed(2, 1.0), 500ms);
  EXPECT_EQ(k_fifteen.after_failed(4, 1.0), 2000ms);
  EXPECT_EQ(k_fifteen.after_failed(40, 1.0), 2000ms);
  EXPECT_EQ(k_fifteen.after_failed(1, 0.5), 125ms);
  EXPECT_EQ(k_fifteen.after_failed(40, 1.5), 3000ms);
  // Never later than the pause after an answered renewal.
  const RenewalSchedule three{3s};
  EXPECT_EQ(three.after_failed(40, 1.0), three.after_renewed(1.0));
}

TEST(RenewalSchedule, GivesTheLeaseUpWithoutEtcdsWordOnlyAfterTwoTtls) {
  EXPECT_FALSE(k_fifteen.gives_up(15s));
  EXPECT_FALSE(k_fifteen.gives_up(29999ms));
  EXPECT_TRUE(k_fifteen.gives_up(30s));
}

}  // namespace
}  // namespace ddprun::etcd
