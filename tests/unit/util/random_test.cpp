#include "ddprun/util/random.hpp"

#include <gtest/gtest.h>

#include <set>

namespace ddprun::util {
namespace {

TEST(Random, GivesTheBytesAskedForAndNumbersThatDiffer) {
  EXPECT_EQ(random_bytes(0).size(), 0U);
  EXPECT_EQ(random_bytes(33).size(), 33U);
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 64; ++i) {
    seen.insert(random_u64());
  }
  EXPECT_EQ(seen.size(), 64U);
}

}  // namespace
}  // namespace ddprun::util
