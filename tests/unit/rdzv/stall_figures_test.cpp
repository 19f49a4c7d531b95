// The stall figures' encoding and merge (stall_figures.hpp).

#include "ddprun/rdzv/stall_figures.hpp"

#include <gtest/gtest.h>

namespace ddprun::rdzv {
namespace {

using namespace std::chrono_literals;

TEST(StallFigures, EncodeDecodeRoundTrips) {
  const StallFigures full{41s, 58s, 7500s};
  EXPECT_EQ(encode_stall_figures(full), "41000 58000 7500000");
  EXPECT_EQ(decode_stall_figures("41000 58000 7500000"), full);
  const StallFigures fresh{};
  EXPECT_EQ(encode_stall_figures(fresh), "- - 0");
  EXPECT_EQ(decode_stall_figures("- - 0"), fresh);
  EXPECT_EQ(encode_node_stall(290s, full), "290000 41000 58000 7500000");
  const auto node = decode_node_stall("290000 41000 58000 7500000");
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(node->timeout, 290s);
  EXPECT_EQ(node->figures, full);
}

TEST(StallFigures, MalformedTextIsNone) {
  for (const char* bad : {"", "1 2", "1 2 3 4", "a 2 3", "1 -2 3", "1 2 -", "1  2 3"}) {
    EXPECT_FALSE(decode_stall_figures(bad).has_value()) << bad;
  }
  for (const char* bad : {"", "5", "x 1 2 3", "5 1 2"}) {
    EXPECT_FALSE(decode_node_stall(bad).has_value()) << bad;
  }
}

TEST(StallFigures, MergeTakesEachFieldsMaximum) {
  const StallFigures a{40s, std::nullopt, 2h};
  const StallFigures b{std::nullopt, 8s, 3h};
  EXPECT_EQ(merge(a, b), (StallFigures{40s, 8s, 3h}));
  EXPECT_EQ(merge(b, a), merge(a, b));
  EXPECT_EQ(merge(StallFigures{10s, 90s, 1s}, StallFigures{20s, 5s, 0s}),
            (StallFigures{20s, 90s, 1s}));
}

TEST(StallFigures, KeysSitBesideTheRendezvousOwn) {
  EXPECT_EQ(node_stall_key("job7", "h_1_0"), "ddprun/rdzv/job7/stall/h_1_0");
  EXPECT_EQ(round_stall_key("job7", 3), "ddprun/rdzv/job7/3/stall");
}

}  // namespace
}  // namespace ddprun::rdzv
