// The rendezvous store's candidate ports derived from a job id (sched/ports.hpp).

#include "ddprun/sched/ports.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace ddprun::sched {
namespace {

TEST(Ports, CandidatesAreDeterministicConsecutiveAndWrap) {
  EXPECT_EQ(candidate_ports(0),
            (std::vector<int>{29400, 29401, 29402, 29403, 29404, 29405, 29406, 29407}));
  EXPECT_EQ(candidate_ports(4242).front(), 29400 + 4242 % k_port_span);
  auto wrapped = candidate_ports(k_port_span - 2);
  EXPECT_EQ(wrapped[1], k_port_base + k_port_span - 1);
  EXPECT_EQ(wrapped[2], k_port_base);
  for (std::uint64_t key : {1ULL, 99999ULL, 18446744073709551615ULL}) {
    for (int p : candidate_ports(key)) {
      EXPECT_GE(p, k_port_base);
      EXPECT_LT(p, k_port_base + k_port_span);
    }
  }
}

TEST(Ports, DescribesRunsAndLists) {
  EXPECT_EQ(describe_ports(candidate_ports(0)), "29400-29407");
  EXPECT_EQ(describe_ports({12000, 12005}), "12000, 12005");
  EXPECT_EQ(describe_ports({29500}), "29500");
  EXPECT_EQ(describe_ports({}), "");
}

TEST(Ports, ParsesReservedRanges) {
  EXPECT_EQ(*parse_port_range("12000-12002"), (std::vector<int>{12000, 12001, 12002}));
  EXPECT_EQ(*parse_port_range("12000"), std::vector<int>{12000});
  for (const char* text : {"", "x", "2-1", "0", "65536", "1000-9000"}) {
    EXPECT_FALSE(parse_port_range(text).has_value()) << text;
  }
}

TEST(Ports, TextKeysAreStableHashes) {
  EXPECT_EQ(port_key_of("f2WZ9aKXxDb"), port_key_of("f2WZ9aKXxDb"));
  EXPECT_NE(port_key_of("f2WZ9aKXxDb"), port_key_of("f2WZ9aKXxDc"));
  EXPECT_EQ(port_key_of(""), 14695981039346656037ULL);  // FNV-1a offset basis
}

}  // namespace
}  // namespace ddprun::sched
