#include "ddprun/util/batches.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using ddprun::util::batches;

TEST(Batches, CutsInOrderWithAShorterLastRun) {
  const std::vector<int> items{1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(batches(items, 3), (std::vector<std::vector<int>>{{1, 2, 3}, {4, 5, 6}, {7}}));
  EXPECT_EQ(batches(items, 7), (std::vector<std::vector<int>>{items}));
  EXPECT_EQ(batches(items, 100), (std::vector<std::vector<int>>{items}));
  EXPECT_EQ(batches(items, 1).size(), 7U);
  EXPECT_EQ(batches(items, 0).size(), 7U);
}

TEST(Batches, NoItemsNoBatchesAndTheItemsAreMoved) {
  EXPECT_TRUE(batches(std::vector<std::string>{}, 4).empty());
  const std::string long_key(64, 'k');  // beyond the small-string buffer, so a move shows
  std::vector<std::string> keys{long_key, long_key};
  const auto* first = keys[0].data();
  auto cut = batches(std::move(keys), 1);
  ASSERT_EQ(cut.size(), 2U);
  EXPECT_EQ(cut[1][0], long_key);
  EXPECT_EQ(cut[0][0].data(), first);
}
