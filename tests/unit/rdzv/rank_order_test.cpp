// place_nodes as a table: domains, infrastructure orders, segments, spares and losses.

#include "ddprun/rdzv/rank_order.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ddprun::rdzv {
namespace {

/// A node written as "name:domain" plus its facts; "name" alone has no domain.
struct N {
  std::string spec;
  std::optional<int> index{};
  std::string topology{};
  int last_round = -1;
  int last_rank = -1;
  bool endpoint = false;
};

std::vector<Candidate> candidates(const std::vector<N>& nodes) {
  std::vector<Candidate> out;
  int slot = 0;
  for (const auto& n : nodes) {
    Candidate c;
    c.slot = ++slot;
    const auto colon = n.spec.find(':');
    c.node.addr = n.spec.substr(0, colon);
    c.node.domain = colon == std::string::npos ? "" : n.spec.substr(colon + 1);
    c.node.pid = 1;
    c.node.node_index = n.index;
    c.node.topology = n.topology;
    c.node.last_round = n.last_round;
    c.node.last_rank = n.last_rank;
    c.node.is_endpoint_host = n.endpoint;
    out.push_back(std::move(c));
  }
  return out;
}

std::string names(const std::vector<Candidate>& live, const std::vector<std::size_t>& at) {
  std::string out;
  for (auto i : at) {
    out += (out.empty() ? "" : " ") + live[i].node.addr;
  }
  return out;
}

struct Row {
  const char* what;
  std::vector<N> nodes;  ///< in join (slot) order
  int max_nodes;
  int segment;
  const char* members;  ///< group-rank order
  const char* standby;
};

class RankOrderTable : public ::testing::TestWithParam<Row> {};

TEST_P(RankOrderTable, PlacesAsTheRowSays) {
  const auto& row = GetParam();
  const auto live = candidates(row.nodes);
  const auto p = place_nodes(live, row.max_nodes, row.segment, false);
  EXPECT_EQ(names(live, p.members), row.members) << row.what;
  EXPECT_EQ(names(live, p.standby), row.standby) << row.what;
}

const Row k_rows[] = {
    {"no facts: join order", {{"c"}, {"a"}, {"b"}}, 3, 0, "c a b", ""},
    {"scheduler index before join order",
     {{"c", 2}, {"a"}, {"b", 0}, {"d", 1}},
     4,
     0,
     "b d c a",
     ""},
    {"topology path first, in natural order (s2 before s10), then index",
     {{"a", 0, "s10"}, {"b", 1, "s2"}, {"c", 2, "s2"}, {"d", 3}},
     4,
     0,
     "b c a d",
     ""},
    {"the endpoint host keeps rank 0 whatever its index",
     {{"a", 0}, {"b", 1}, {"h", 5, "", -1, -1, true}},
     3,
     0,
     "h a b",
     ""},
    {"a surviving rank 0 keeps rank 0 against a newcomer with a smaller index",
     {{"new", 0}, {"old0", 3, "", 4, 0}, {"old1", 2, "", 4, 1}},
     3,
     0,
     "old0 new old1",
     ""},
    {"an older rank 0 gives way to the latest one",
     {{"x", std::nullopt, "", 2, 0}, {"y", std::nullopt, "", 4, 0}, {"z", std::nullopt, "", 4, 1}},
     3,
     0,
     "y z x",
     ""},
    {"the latest round's members keep their order over join order",
     {{"p", std::nullopt, "", 3, 2},
      {"q", std::nullopt, "", 3, 1},
      {"new"},
      {"r", std::nullopt, "", 3, 0}},
     4,
     0,
     "r q p new",
     ""},
    {"domains stay together, ordered by their first node",
     {{"a1:A"}, {"b1:B"}, {"a2:A"}, {"b2:B"}},
     4,
     0,
     "a1 a2 b1 b2",
     ""},
    {"segment 2: A B A B joining in that order",
     {{"a1:A"}, {"b1:B"}, {"a2:A"}, {"b2:B"}},
     4,
     2,
     "a1 a2 b1 b2",
     ""},
    {"4:4 segment 2 with domains A C B A B: C stands by",
     {{"a1:A"}, {"c1:C"}, {"b1:B"}, {"a2:A"}, {"b2:B"}},
     4,
     2,
     "a1 a2 b1 b2",
     "c1"},
    {"a domain that lost a node gives up its segment when no node of it waits",
     {{"a2:A", std::nullopt, "", 1, 1},
      {"b1:B", std::nullopt, "", 1, 2},
      {"b2:B", std::nullopt, "", 1, 3},
      {"c1:C"}},
     4,
     2,
     "b1 b2",
     "a2 c1"},
    {"a waiting node of the lost node's domain fills the segment, not another domain's",
     {{"a2:A", std::nullopt, "", 1, 1},
      {"b1:B", std::nullopt, "", 1, 2},
      {"b2:B", std::nullopt, "", 1, 3},
      {"c1:C"},
      {"a3:A"}},
     4,
     2,
     "a2 a3 b1 b2",
     "c1"},
    {"a big domain gives only whole segments, up to MAX",
     {{"a1:A"}, {"a2:A"}, {"a3:A"}, {"b1:B"}, {"b2:B"}, {"a4:A"}, {"a5:A"}},
     4,
     2,
     "a1 a2 a3 a4",
     "a5 b1 b2"},
    {"domains ordered by their smallest infrastructure rank",
     {{"b1:B", 3}, {"a1:A", 0}, {"b2:B", 1}, {"a2:A", 2}},
     4,
     2,
     "a1 a2 b2 b1",
     ""},
    {"nodes without a domain are alone: segment 2 places none of them",
     {{"x"}, {"y"}, {"a1:A"}, {"a2:A"}},
     4,
     2,
     "a1 a2",
     "x y"},
    {"segment 1: every node, domains together",
     {{"x"}, {"a1:A"}, {"y"}, {"a2:A"}},
     4,
     1,
     "x a1 a2 y",
     ""},
    {"a Slurm block domain with its path: blocks in natural order",
     {{"n1:b10", 0, "b10"}, {"n2:b2", 1, "b2"}, {"n3:b10", 2, "b10"}, {"n4:b2", 3, "b2"}},
     4,
     2,
     "n2 n4 n1 n3",
     ""},
};

INSTANTIATE_TEST_SUITE_P(Rows, RankOrderTable, ::testing::ValuesIn(k_rows));

TEST(RankOrder, TheStaticBackendFollowsTheNodeIndexOnly) {
  auto live = candidates({{"c:A", 2, "s9"}, {"a:B", 0, "s1"}, {"b:A", 1, "s5", 3, 0}});
  const auto p = place_nodes(live, 3, 0, true);
  EXPECT_EQ(names(live, p.members), "a b c");
  EXPECT_TRUE(p.standby.empty());
}

TEST(RankOrder, NaturalOrderComparesDigitRunsAsNumbers) {
  EXPECT_TRUE(natural_less("s2", "s10"));
  EXPECT_FALSE(natural_less("s10", "s2"));
  EXPECT_TRUE(natural_less("s0.s4", "s0.s10"));
  EXPECT_TRUE(natural_less("b8", "c1"));
  EXPECT_TRUE(natural_less("s1", "s1.s0"));
  EXPECT_FALSE(natural_less("s01", "s1"));
  EXPECT_FALSE(natural_less("s1", "s01"));
  EXPECT_FALSE(natural_less("x", "x"));
}

TEST(RankOrder, DomainTextNamesANodeAloneWithADash) {
  NodeDesc n;
  EXPECT_EQ(domain_text(n), "-");
  n.domain = "A";
  EXPECT_EQ(domain_text(n), "A");
}

}  // namespace
}  // namespace ddprun::rdzv
