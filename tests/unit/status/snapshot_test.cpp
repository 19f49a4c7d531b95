// read_snapshot through a Reader over an in-memory map: which keys it reads for a complete and
// a joining round, and how a missing or unreadable state and a failing reader come out.
#include "ddprun/status/snapshot.hpp"

#include "ddprun/rdzv/members.hpp"
#include "ddprun/rdzv/stall_figures.hpp"

#include <gtest/gtest.h>

#include <map>

#include "fixtures.hpp"

namespace ddprun::status {
namespace {

constexpr const char* k_id = "job";

class MapReader final : public Reader {
 public:
  Result<std::vector<std::string>> multi_get(std::vector<std::string> keys) override {
    ++calls;
    if (failing) {
      return make_error(ErrorCode::io, "connection reset");
    }
    std::vector<std::string> out;
    for (const auto& k : keys) {
      auto it = data.find(k);
      out.push_back(it == data.end() ? std::string() : it->second);
    }
    return out;
  }
  std::string where() const override { return "memory"; }

  std::map<std::string, std::string> data;
  bool failing = false;
  int calls = 0;
};

using test::node;

TEST(StatusSnapshot, NoStateIsNoSnapshot) {
  MapReader reader;
  auto snap = read_snapshot(reader, k_id);
  ASSERT_TRUE(snap) << snap.error().message;
  EXPECT_FALSE(*snap);
  EXPECT_EQ(reader.calls, 1);
}

TEST(StatusSnapshot, CompleteRoundReadsItsMembersAndTheirTimes) {
  MapReader reader;
  rdzv::RoundHeader h;
  h.round = 3;
  h.phase = rdzv::Phase::complete;
  h.size = 2;
  h.members = 2;
  h.workers = 3;
  const auto a = node("10.0.0.1", 11, 2);
  const auto b = node("10.0.0.2", 22, 1);
  reader.data[rdzv::state_key(k_id)] = rdzv::encode_header(h);
  reader.data[rdzv::members_key(k_id, 3, 0)] = rdzv::encode_members({b, a});
  reader.data[rdzv::heartbeat_key(k_id, a.id())] = "1700000000000";
  reader.data[rdzv::progress_key(k_id, a.id())] = "1699999990000";
  reader.data[rdzv::heartbeat_key(k_id, b.id())] = "1700000000500";
  reader.data[rdzv::progress_key(k_id, b.id())] = rdzv::k_progress_unknown;
  reader.data[rdzv::node_stall_key(k_id, a.id())] = "290000 41000 58000 7500000";
  auto snap = read_snapshot(reader, k_id);
  ASSERT_TRUE(snap) << snap.error().message;
  ASSERT_TRUE(*snap);
  EXPECT_EQ((*snap)->header, h);
  EXPECT_EQ((*snap)->nodes, (std::vector<rdzv::NodeDesc>{b, a})) << "members keep their order";
  EXPECT_EQ((*snap)->heartbeats.at(a.id()), 1700000000000);
  EXPECT_EQ((*snap)->heartbeats.at(b.id()), 1700000000500);
  EXPECT_EQ((*snap)->progress.at(a.id()), 1699999990000);
  EXPECT_EQ((*snap)->progress.count(b.id()), 0U) << "'-': the node knows no progress";
  EXPECT_EQ((*snap)->stall_timeouts.at(a.id()), std::chrono::milliseconds(290000));
  EXPECT_EQ((*snap)->stall_timeouts.count(b.id()), 0U) << "b does not learn its timeout";
}

TEST(StatusSnapshot, JoiningRoundReadsTheSlotCounterAndLeavesWithdrawnSlotsOut) {
  MapReader reader;
  rdzv::RoundHeader h;
  h.round = 1;
  reader.data[rdzv::state_key(k_id)] = rdzv::encode_header(h);
  auto host = node("10.0.0.9", 1, 1);
  host.is_endpoint_host = true;
  const auto other = node("10.0.0.1", 2, 1);
  const auto gone = node("10.0.0.5", 3, 1);
  reader.data[rdzv::slots_key(k_id, 1)] = "4";  // slot 4 not written yet
  reader.data[rdzv::slot_key(k_id, 1, 1)] = rdzv::encode_node(other);
  reader.data[rdzv::slot_key(k_id, 1, 2)] = rdzv::encode_withdrawn(gone);
  reader.data[rdzv::slot_key(k_id, 1, 3)] = rdzv::encode_node(host);
  auto snap = read_snapshot(reader, k_id);
  ASSERT_TRUE(snap) << snap.error().message;
  ASSERT_TRUE(*snap);
  EXPECT_EQ((*snap)->nodes, (std::vector<rdzv::NodeDesc>{host, other})) << "rank_before order";
  EXPECT_TRUE((*snap)->heartbeats.empty());
}

TEST(StatusSnapshot, JoiningRoundWithoutASlotCounterHasNoNodes) {
  MapReader reader;
  reader.data[rdzv::state_key(k_id)] = rdzv::encode_header(rdzv::RoundHeader{});
  auto snap = read_snapshot(reader, k_id);
  ASSERT_TRUE(snap) << snap.error().message;
  ASSERT_TRUE(*snap);
  EXPECT_TRUE((*snap)->nodes.empty());
}

TEST(StatusSnapshot, UnreadableHeaderOrMembersAndReaderFailuresAreErrors) {
  MapReader reader;
  reader.data[rdzv::state_key(k_id)] = "{not json";
  EXPECT_FALSE(read_snapshot(reader, k_id));

  rdzv::RoundHeader h;
  h.phase = rdzv::Phase::complete;
  reader.data[rdzv::state_key(k_id)] = rdzv::encode_header(h);
  reader.data[rdzv::members_key(k_id, 0, 0)] = "[oops";
  EXPECT_FALSE(read_snapshot(reader, k_id));

  reader.failing = true;
  auto snap = read_snapshot(reader, k_id);
  ASSERT_FALSE(snap);
  EXPECT_EQ(snap.error().message, "connection reset");
}

}  // namespace
}  // namespace ddprun::status
