#include "ddprun/rdzv/join_state.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"

namespace ddprun::rdzv {
namespace {

constexpr WallMs k_now = 1'000'000;

TEST(RdzvJoinState, TheRoundIsSeenAtItsFirstReadOnly) {
  const RdzvSettings s = test::settings(2, 2);
  JoinState j;
  j.note_header(test::joining(3), std::nullopt, k_now, s);
  j.note_header(test::joining(3), std::nullopt, k_now + 500, s);
  EXPECT_EQ(j.seen_round, 3);
  EXPECT_EQ(j.seen_round_at, k_now) << "a second read of the same round keeps the first time";
  j.note_header(test::joining(4), std::nullopt, k_now + 900, s);
  EXPECT_EQ(j.seen_round_at, k_now + 900);
}

TEST(RdzvJoinState, ANodeOnTheWaitListOfAFullRoundStandsByUntilItJoins) {
  const RdzvSettings s = test::settings(2, 2);
  JoinState j;
  j.waiting_round = 3;
  j.note_header(test::complete(3, 2), std::nullopt, k_now, s);
  EXPECT_TRUE(j.spare());
  EXPECT_TRUE(j.view(std::nullopt, k_now).spare);
  j.joined();
  EXPECT_FALSE(j.spare());
  EXPECT_EQ(j.waiting_round, -1);
}

TEST(RdzvJoinState, ACountedSlotBecomesTheNodesOnlyOnceWritten) {
  JoinState j;
  j.counted_round = 2;
  j.counted_slot = 5;
  EXPECT_EQ(j.view(1, k_now).slot, 0) << "counted but not written: not yet this node's";
  j.slot_written(2);
  const JoinView v = j.view(1, k_now);
  EXPECT_EQ(v.slot, 5);
  EXPECT_EQ(v.slot_round, 2);
  EXPECT_EQ(v.ran_round, 1);
  EXPECT_EQ(j.counted_round, -1) << "the next round counts afresh";
  j.forget_slot();
  EXPECT_EQ(j.view(1, k_now).slot, 0);
}

}  // namespace
}  // namespace ddprun::rdzv
