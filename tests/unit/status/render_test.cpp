#include "ddprun/status/render.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ddprun::status {
namespace {

constexpr rdzv::WallMs k_now = 1'700'000'010'000;

rdzv::NodeDesc node(const std::string& addr, std::int64_t pid, int nproc) {
  rdzv::NodeDesc n;
  n.addr = addr;
  n.pid = pid;
  n.nproc = nproc;
  return n;
}

/// Round 1 running on two nodes (host b is rank 0: it hosts the store), one node waiting.
rdzv::RdzvState running_state() {
  rdzv::RdzvState s;
  s.round = 1;
  s.complete = true;
  auto a = node("10.0.0.1", 4242, 8);
  auto b = node("10.0.0.22", 77, 4);
  b.is_endpoint_host = true;
  s.participants[a.id()] = rdzv::Participant{a, 1};
  s.participants[b.id()] = rdzv::Participant{b, 0};
  auto w = node("10.0.0.3", 9, 2);
  s.wait_list[w.id()] = w;
  s.last_heartbeats[a.id()] = k_now - 3'200;
  s.last_heartbeats[b.id()] = k_now - 150;
  s.last_heartbeats[w.id()] = k_now + 500;  // clock skew
  s.failed_round = rdzv::FailedRound{0, a.id()};
  return s;
}

TEST(StatusRender, AgeHasOneDecimalAndNeverGoesNegative) {
  EXPECT_EQ(render_age(k_now - 3'249, k_now), "3.2s ago");
  EXPECT_EQ(render_age(k_now, k_now), "0.0s ago");
  EXPECT_EQ(render_age(k_now + 900, k_now), "0.0s ago");
}

TEST(StatusRender, TableMatchesGolden) {
  const std::string golden = R"(round 1 (1 re-rendezvous), complete, open
last failure: round 0, reported by 10.0.0.1_4242_0
participants: 2 nodes, 12 workers
  RANK  NODE             ADDR       PID   NPROC  ROLE     HEARTBEAT
  0     10.0.0.22_77_0   10.0.0.22  77    4      default  0.1s ago
  1     10.0.0.1_4242_0  10.0.0.1   4242  8      default  3.2s ago
waiting: 1 nodes
  NODE          ADDR      PID  NPROC  ROLE     HEARTBEAT
  10.0.0.3_9_0  10.0.0.3  9    2      default  0.0s ago
)";
  EXPECT_EQ(render_status_table(running_state(), k_now), golden);
}

TEST(StatusRender, JoiningRoundShowsNoRanksAndTheLastCall) {
  rdzv::RdzvState s;
  s.deadline = k_now + 2'500;
  s.closed = true;
  auto a = node("h1", 5, 1);
  s.participants[a.id()] = rdzv::Participant{a, 0};
  const std::string golden = R"(round 0, joining (last call ends in 2.5s), closed
last failure: none
participants: 1 nodes, 1 workers
  RANK  NODE    ADDR  PID  NPROC  ROLE     HEARTBEAT
  -     h1_5_0  h1    5    1      default  -
waiting: 0 nodes
)";
  EXPECT_EQ(render_status_table(s, k_now), golden);
}

TEST(StatusRender, EmptyStateHasNoTables) {
  EXPECT_EQ(render_status_table(rdzv::RdzvState{}, k_now),
            "round 0, joining, open\nlast failure: none\nparticipants: 0 nodes, 0 workers\n"
            "waiting: 0 nodes\n");
}

TEST(StatusRender, JsonMatchesGolden) {
  const auto j = nlohmann::json::parse(render_status_json(running_state(), k_now));
  const auto golden = nlohmann::json::parse(R"({
    "round": 1, "restarts": 1, "complete": true, "closed": false, "workers": 12,
    "now_ms": 1700000010000, "deadline_ms": null,
    "failed_round": {"round": 0, "reporter": "10.0.0.1_4242_0"},
    "participants": [
      {"rank": 0, "id": "10.0.0.22_77_0", "addr": "10.0.0.22", "pid": 77, "local_id": 0,
       "nproc": 4, "role": "default", "endpoint_host": true, "node_index": null,
       "last_heartbeat_ms": 1700000009850, "heartbeat_age_s": 0.15},
      {"rank": 1, "id": "10.0.0.1_4242_0", "addr": "10.0.0.1", "pid": 4242, "local_id": 0,
       "nproc": 8, "role": "default", "endpoint_host": false, "node_index": null,
       "last_heartbeat_ms": 1700000006800, "heartbeat_age_s": 3.2}],
    "waiting": [
      {"id": "10.0.0.3_9_0", "addr": "10.0.0.3", "pid": 9, "local_id": 0, "nproc": 2,
       "role": "default", "endpoint_host": false, "node_index": null,
       "last_heartbeat_ms": 1700000010500, "heartbeat_age_s": 0.0}]
  })");
  EXPECT_EQ(j, golden) << j.dump(2);
}

TEST(StatusRender, JsonOfJoiningRoundHasNullRanks) {
  rdzv::RdzvState s;
  auto a = node("h1", 5, 1);
  s.participants[a.id()] = rdzv::Participant{a, 0};
  const auto j = nlohmann::json::parse(render_status_json(s, k_now));
  EXPECT_TRUE(j["participants"][0]["rank"].is_null());
  EXPECT_TRUE(j["participants"][0]["heartbeat_age_s"].is_null());
}

}  // namespace
}  // namespace ddprun::status
