#include "ddprun/process/guardian.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

using namespace ddprun::process;

namespace {

GuardMessage watch(pid_t pgid) { return {GuardMessage::Op::watch, pgid}; }
GuardMessage forget(pid_t pgid) { return {GuardMessage::Op::forget, pgid}; }

std::vector<pid_t> members(const GuardedGroups& g) { return {g.begin(), g.end()}; }

}  // namespace

TEST(GuardMessage, RoundTrips) {
  for (auto m : {watch(2), watch(4194304), forget(1234)}) {
    auto bytes = encode_guard_message(m);
    auto back = decode_guard_message(bytes.data(), bytes.size());
    ASSERT_TRUE(back);
    EXPECT_EQ(back->op, m.op);
    EXPECT_EQ(back->pgid, m.pgid);
  }
}

TEST(GuardMessage, RejectsWrongSizeUnknownOpAndNonGroups) {
  auto ok = encode_guard_message(watch(100));
  EXPECT_FALSE(decode_guard_message(ok.data(), ok.size() - 1));
  EXPECT_FALSE(decode_guard_message(ok.data(), 0));
  auto bad_op = ok;
  bad_op[0] = 7;
  EXPECT_FALSE(decode_guard_message(bad_op.data(), bad_op.size()));
  // pgid 1 (init), 0 (the caller's own group) and negatives must never reach kill(-pgid).
  for (pid_t pgid : {1, 0, -1, -100}) {
    auto b = encode_guard_message(watch(pgid));
    EXPECT_FALSE(decode_guard_message(b.data(), b.size())) << pgid;
  }
}

TEST(GuardedGroups, WatchForgetAndDuplicates) {
  GuardedGroups g;
  EXPECT_TRUE(g.apply(watch(10)));
  EXPECT_TRUE(g.apply(watch(11)));
  EXPECT_TRUE(g.apply(watch(10)));
  EXPECT_EQ(g.size(), 2u);
  EXPECT_TRUE(g.apply(forget(10)));
  EXPECT_EQ(members(g), std::vector<pid_t>{11});
  EXPECT_FALSE(g.contains(10));
  EXPECT_TRUE(g.apply(forget(99)));  // unknown: nothing happens
  EXPECT_TRUE(g.apply(forget(11)));
  EXPECT_EQ(g.size(), 0u);
}

TEST(GuardedGroups, RemovalKeepsTheOthers) {
  GuardedGroups g;
  for (pid_t p = 100; p < 105; ++p) {
    ASSERT_TRUE(g.apply(watch(p)));
  }
  g.apply(forget(101));
  g.apply(forget(104));
  auto m = members(g);
  std::sort(m.begin(), m.end());
  EXPECT_EQ(m, (std::vector<pid_t>{100, 102, 103}));
}

TEST(GuardedGroups, RefusesBeyondCapacityAndRecoversAfterForget) {
  GuardedGroups g;
  for (std::size_t i = 0; i < k_max_guarded_groups; ++i) {
    ASSERT_TRUE(g.apply(watch(static_cast<pid_t>(1000 + i))));
  }
  EXPECT_FALSE(g.apply(watch(99999)));
  EXPECT_TRUE(g.apply(watch(1000)));  // already there: fine
  EXPECT_TRUE(g.apply(forget(1000)));
  EXPECT_TRUE(g.apply(watch(99999)));
  EXPECT_TRUE(g.contains(99999));
  EXPECT_EQ(g.size(), k_max_guarded_groups);
}
