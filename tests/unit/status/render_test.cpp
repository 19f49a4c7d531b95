#include "ddprun/status/render.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures.hpp"

namespace ddprun::status {
namespace {

constexpr rdzv::WallMs k_now = 1'700'000'010'000;

using test::node;

/// Round 1 running on two nodes (host b is rank 0: it hosts the store), one node waiting.
Snapshot running_snapshot() {
  Snapshot s;
  auto& h = s.header;
  h.round = 1;
  h.phase = rdzv::Phase::complete;
  h.size = 2;
  h.members = 2;
  h.workers = 12;
  h.failed_round =
      rdzv::FailedRound{0, "10.0.0.1_4242_0", k_now - 9'000, "rank 9 failed (exitcode: 1)"};
  h.excluded = {rdzv::Exclusion{"10.0.0.9_5_0", 0, 2, "rank 20 failed (exitcode: 1)"}};
  h.waiting = 1;
  h.waiting_ids = {"10.0.0.3_9_0"};
  auto a = node("10.0.0.1", 4242, 8);
  auto b = node("10.0.0.22", 77, 4);
  b.is_endpoint_host = true;
  s.nodes = {b, a};
  s.heartbeats[a.id()] = k_now - 3'200;
  s.heartbeats[b.id()] = k_now + 500;    // clock skew
  s.progress[a.id()] = k_now - 185'400;  // b's agent says nothing about its workers
  s.stall_timeouts[a.id()] = std::chrono::milliseconds(290'000);  // a learns it: auto
  return s;
}

TEST(StatusRender, AgeHasOneDecimalAndNeverGoesNegative) {
  EXPECT_EQ(render_age(k_now - 3'249, k_now), "3.2s ago");
  EXPECT_EQ(render_age(k_now, k_now), "0.0s ago");
  EXPECT_EQ(render_age(k_now + 900, k_now), "0.0s ago");
}

TEST(StatusRender, ElapsedIsWholeSecondsThenMinutesThenHours) {
  EXPECT_EQ(render_elapsed(k_now - 3'999, k_now), "3s ago");
  EXPECT_EQ(render_elapsed(k_now + 900, k_now), "0s ago");
  EXPECT_EQ(render_elapsed(k_now - 59'999, k_now), "59s ago");
  EXPECT_EQ(render_elapsed(k_now - 60'000, k_now), "1m00s ago");
  EXPECT_EQ(render_elapsed(k_now - 3'599'000, k_now), "59m59s ago");
  EXPECT_EQ(render_elapsed(k_now - 3'600'000, k_now), "1h00m ago");
  EXPECT_EQ(render_elapsed(k_now - 7'500'000, k_now), "2h05m ago");
  EXPECT_EQ(render_elapsed(k_now - 100 * 3'600'000, k_now), "100h00m ago");
}

TEST(StatusRender, CompleteRoundTableMatchesGolden) {
  const std::string golden = R"(round 1 (1 re-rendezvous), complete, open
last failure: round 0, root cause 10.0.0.1_4242_0: rank 9 failed (exitcode: 1)
excluded: 10.0.0.9_5_0 after 2 failed rounds in a row (last in round 0: rank 20 failed (exitcode: 1))
participants: 2 nodes, 12 workers
  RANK  NODE             ADDR       PID   NPROC  ROLE     HEARTBEAT  LAST PROGRESS  STALL TIMEOUT
  0     10.0.0.22_77_0   10.0.0.22  77    4      default  0.0s ago   -              -
  1     10.0.0.1_4242_0  10.0.0.1   4242  8      default  3.2s ago   3m05s ago      290s
waiting (spares, late joiners): 1 nodes
  10.0.0.3_9_0
)";
  EXPECT_EQ(render_status_table(running_snapshot(), k_now), golden);
}

TEST(StatusRender, DomainsAndSegmentsGetTheirColumnsWhenTheRunHasThem) {
  auto s = running_snapshot();
  s.header.segment = 1;
  s.nodes[0].domain = "A";
  const auto table = render_status_table(s, k_now);
  EXPECT_NE(table.find("LAST PROGRESS  DOMAIN  SEGMENT  STALL TIMEOUT"), std::string::npos)
      << table;
  EXPECT_NE(table.find("-              A       0        -"), std::string::npos) << table;
  EXPECT_NE(table.find("3m05s ago      -       1        290s"), std::string::npos) << table;
  const auto j = nlohmann::json::parse(render_status_json(s, k_now));
  EXPECT_EQ(j["participants"][0]["domain"], "A");
  EXPECT_EQ(j["participants"][1]["domain"], nullptr);
  EXPECT_EQ(j["participants"][1]["segment"], 1);
  EXPECT_EQ(j["segment_size"], 1);
}

TEST(StatusRender, UnhealthyNodeShowsItsHealthCheckReason) {
  auto s = running_snapshot();
  s.header.excluded.push_back(
      rdzv::Exclusion{"10.0.0.8_6_0", 1, 0, "health check failed: ECC errors (exit status 1)"});
  const auto table = render_status_table(s, k_now);
  EXPECT_NE(table.find("excluded: 10.0.0.8_6_0, unhealthy before round 1: health check failed: "
                       "ECC errors (exit status 1)\n"),
            std::string::npos)
      << table;
}

TEST(StatusRender, JoiningRoundShowsNoRanksAndTheLastCall) {
  Snapshot s;
  s.header.deadline = k_now + 2'500;
  s.header.closed = true;
  s.nodes = {node("h1", 5, 1), node("h2", 6, 2)};
  s.heartbeats["h2_6_0"] = k_now - 100;
  s.progress["h2_6_0"] = k_now - 2'900;
  const std::string golden = R"(round 0, joining (last call ends in 2.5s), closed
last failure: none
participants: 2 nodes, 3 workers
  RANK  NODE    ADDR  PID  NPROC  ROLE     HEARTBEAT  LAST PROGRESS
  -     h1_5_0  h1    5    1      default  -          -
  -     h2_6_0  h2    6    2      default  0.1s ago   2s ago
waiting (spares, late joiners): 0 nodes
)";
  EXPECT_EQ(render_status_table(s, k_now), golden);
}

TEST(StatusRender, WaitingIdsAreCutWithACount) {
  Snapshot s = running_snapshot();
  s.header.waiting = 40;
  s.header.waiting_ids = {"w0_1_0", "w1_1_0"};
  const std::string table = render_status_table(s, k_now);
  EXPECT_NE(
      table.find(
          "waiting (spares, late joiners): 40 nodes\n  w0_1_0\n  w1_1_0\n  ... and 38 more\n"),
      std::string::npos)
      << table;
}

TEST(StatusRender, EndedRoundAndErrorLines) {
  Snapshot s;
  s.header.round = 3;
  s.header.ended = rdzv::RoundEnd{2, {"a_1_0"}, {"b_2_0", "c_3_0"}};
  s.header.phase = rdzv::Phase::complete;
  s.header.error = "--node-rank 0 is used by two agents";
  EXPECT_EQ(render_status_table(s, k_now),
            "round 3 (3 re-rendezvous), complete, open\nlast failure: none\n"
            "round 2 ended: left a_1_0; lost b_2_0, c_3_0\n"
            "error: --node-rank 0 is used by two agents\n"
            "participants: 0 nodes, 0 workers\nwaiting (spares, late joiners): 0 nodes\n");
  s.header.ended = rdzv::RoundEnd{2, {}, {"b_2_0"}};
  EXPECT_NE(render_status_table(s, k_now).find("\nround 2 ended: lost b_2_0\n"), std::string::npos);
  s.header.ended = rdzv::RoundEnd{2, {"a_1_0"}, {}};
  EXPECT_NE(render_status_table(s, k_now).find("\nround 2 ended: left a_1_0\n"), std::string::npos);
}

TEST(StatusRender, EmptySnapshotHasNoTables) {
  EXPECT_EQ(render_status_table(Snapshot{}, k_now),
            "round 0, joining, open\nlast failure: none\nparticipants: 0 nodes, 0 workers\n"
            "waiting (spares, late joiners): 0 nodes\n");
}

TEST(StatusRender, JsonMatchesGolden) {
  const auto j = nlohmann::json::parse(render_status_json(running_snapshot(), k_now));
  const auto golden = nlohmann::json::parse(R"J({
    "round": 1, "restarts": 1, "phase": "complete", "complete": true, "closed": false,
    "workers": 12, "now_ms": 1700000010000, "deadline_ms": null, "error": "",
    "failed_round": {"round": 0, "reporter": "10.0.0.1_4242_0",
                     "reason": "rank 9 failed (exitcode: 1)"},
    "excluded": [{"node": "10.0.0.9_5_0", "round": 0, "failures": 2,
                  "reason": "rank 20 failed (exitcode: 1)"}],
    "ended": {"round": -1, "left": [], "lost": []},
    "participants": [
      {"rank": 0, "id": "10.0.0.22_77_0", "addr": "10.0.0.22", "pid": 77, "local_id": 0,
       "nproc": 4, "role": "default", "endpoint_host": true, "node_index": null,
       "last_heartbeat_ms": 1700000010500, "heartbeat_age_s": 0.0,
       "last_progress_ms": null, "progress_age_s": null, "stall_timeout_s": null,
       "domain": null, "segment": null},
      {"rank": 1, "id": "10.0.0.1_4242_0", "addr": "10.0.0.1", "pid": 4242, "local_id": 0,
       "nproc": 8, "role": "default", "endpoint_host": false, "node_index": null,
       "last_heartbeat_ms": 1700000006800, "heartbeat_age_s": 3.2,
       "last_progress_ms": 1699999824600, "progress_age_s": 185.4, "stall_timeout_s": 290.0,
       "domain": null, "segment": null}],
    "segment_size": null, "standby": 0,
    "waiting": 1,
    "waiting_ids": ["10.0.0.3_9_0"]
  })J");
  EXPECT_EQ(j, golden) << j.dump(2);
}

TEST(StatusRender, JsonOfJoiningRoundHasNullRanksAndTheDeadline) {
  Snapshot s;
  s.header.deadline = k_now + 2'500;
  s.header.ended = rdzv::RoundEnd{4, {"a_1_0"}, {}};
  s.header.round = 5;
  auto a = node("h1", 5, 1);
  a.node_index = 7;
  s.nodes = {a};
  const auto j = nlohmann::json::parse(render_status_json(s, k_now));
  EXPECT_EQ(j["phase"], "joining");
  EXPECT_EQ(j["complete"], false);
  EXPECT_EQ(j["deadline_ms"], k_now + 2'500);
  EXPECT_EQ(j["ended"], nlohmann::json::parse(R"({"round": 4, "left": ["a_1_0"], "lost": []})"));
  EXPECT_TRUE(j["participants"][0]["rank"].is_null());
  EXPECT_EQ(j["participants"][0]["node_index"], 7);
  EXPECT_TRUE(j["participants"][0]["heartbeat_age_s"].is_null());
  EXPECT_TRUE(j["participants"][0]["last_heartbeat_ms"].is_null());
}

TEST(StatusRender, JsonIsOneLine) {
  EXPECT_EQ(render_status_json(running_snapshot(), k_now).find('\n'), std::string::npos);
}

}  // namespace
}  // namespace ddprun::status
