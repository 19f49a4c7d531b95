#include "ddprun/agent/metrics.hpp"

#include "ddprun/agent/metrics_hooks.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ddprun::agent {
namespace {

using namespace std::chrono_literals;

const util::SteadyTime k_t0{std::chrono::seconds(1000)};

Metrics make() { return Metrics({"job\"1", "node7", "trainer"}, k_t0); }

LiveFigures running(int workers, double since) {
  LiveFigures f;
  f.health = HealthSnapshot{"running", 2, workers, since};
  f.cpu_seconds = 1.5;
  f.resident_bytes = 4096;
  f.start_time_seconds = 1795946171.25;
  return f;
}

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

const std::string k_labels = R"(run_id="job\"1",node="node7",role="trainer")";

TEST(Metrics, EverySampleCarriesTheRunNodeAndRoleWithTheValueEscaped) {
  auto text = make().render(running(2, 0.5));
  EXPECT_TRUE(has_line(text, "ddprun_workers_running{" + k_labels + "} 2")) << text;
  EXPECT_TRUE(has_line(text, "ddprun_worker_group_attempt{" + k_labels + "} 2")) << text;
  EXPECT_TRUE(has_line(text, "ddprun_seconds_since_progress{" + k_labels + "} 0.5")) << text;
  EXPECT_TRUE(has_line(text, "process_cpu_seconds_total{" + k_labels + "} 1.5")) << text;
  EXPECT_TRUE(has_line(text, "process_resident_memory_bytes{" + k_labels + "} 4096")) << text;
  EXPECT_TRUE(has_line(text, "process_start_time_seconds{" + k_labels + "} 1795946171.25")) << text;
  EXPECT_TRUE(has_line(text, "# TYPE ddprun_restarts_total counter")) << text;
  EXPECT_TRUE(has_line(text, "ddprun_state{" + k_labels + ",state=\"running\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "ddprun_state{" + k_labels + ",state=\"rendezvous\"} 0")) << text;
}

TEST(Metrics, RoundsAndRestartsAreCountedByCauseFromZero) {
  auto m = make();
  auto before = m.render(running(2, 0));
  EXPECT_TRUE(has_line(before, "ddprun_restarts_total{" + k_labels + ",cause=\"stall\"} 0"));
  m.round_ended(RoundCause::signal, true);
  m.round_ended(RoundCause::signal, true);
  m.round_ended(RoundCause::stall, false);
  auto text = m.render(running(2, 0));
  EXPECT_TRUE(has_line(text, "ddprun_restarts_total{" + k_labels + ",cause=\"signal\"} 2")) << text;
  EXPECT_TRUE(has_line(text, "ddprun_failed_rounds_total{" + k_labels + ",cause=\"signal\"} 2"));
  EXPECT_TRUE(has_line(text, "ddprun_restarts_total{" + k_labels + ",cause=\"stall\"} 0"));
  EXPECT_TRUE(has_line(text, "ddprun_failed_rounds_total{" + k_labels + ",cause=\"stall\"} 1"));
}

TEST(Metrics, JoinDurationsFillTheHistogramCumulatively) {
  auto m = make();
  m.joined(k_t0 + 300ms, 0);  // the first join counts from the agent's start
  m.round_ended(RoundCause::exit_code, true);
  m.joining(k_t0 + 10s);
  m.joined(k_t0 + 17s, 1);
  auto text = m.render(running(1, 0));
  const std::string h = "ddprun_rendezvous_join_seconds";
  EXPECT_TRUE(has_line(text, "# TYPE " + h + " histogram")) << text;
  EXPECT_TRUE(has_line(text, h + "_bucket{" + k_labels + ",le=\"0.25\"} 0")) << text;
  EXPECT_TRUE(has_line(text, h + "_bucket{" + k_labels + ",le=\"0.5\"} 1")) << text;
  EXPECT_TRUE(has_line(text, h + "_bucket{" + k_labels + ",le=\"5\"} 1")) << text;
  EXPECT_TRUE(has_line(text, h + "_bucket{" + k_labels + ",le=\"10\"} 2")) << text;
  EXPECT_TRUE(has_line(text, h + "_bucket{" + k_labels + ",le=\"+Inf\"} 2")) << text;
  EXPECT_TRUE(has_line(text, h + "_sum{" + k_labels + "} 7.3")) << text;
  EXPECT_TRUE(has_line(text, h + "_count{" + k_labels + "} 2")) << text;
  EXPECT_TRUE(has_line(text, "ddprun_rendezvous_round{" + k_labels + "} 1")) << text;
}

TEST(Metrics, ProgressIsAbsentWhileNoGroupRunsAndTheStallTimeoutSaysItsBasis) {
  auto m = make();
  m.stall_timeout(90s, "learned");
  LiveFigures f;
  f.health = HealthSnapshot{"rendezvous", 0, 0, std::nullopt};
  f.spare_waiting = true;
  auto text = m.render(f);
  EXPECT_EQ(text.find("ddprun_seconds_since_progress"), std::string::npos) << text;
  EXPECT_TRUE(has_line(text, "ddprun_stall_timeout_seconds{" + k_labels + ",basis=\"learned\"} 90"))
      << text;
  EXPECT_TRUE(has_line(text, "ddprun_spare_waiting{" + k_labels + "} 1")) << text;
  m.node_left_out();
  EXPECT_TRUE(has_line(m.render(f), "ddprun_nodes_left_out_total{" + k_labels + "} 1"));
}

TEST(Metrics, OutcomesMapToCauses) {
  EXPECT_EQ(cause_of(Outcome::failed, RoundCause::signal), RoundCause::signal);
  EXPECT_EQ(cause_of(Outcome::failed, std::nullopt), RoundCause::exit_code);
  EXPECT_EQ(cause_of(Outcome::failed, RoundCause::file_timer), RoundCause::file_timer);
  EXPECT_EQ(cause_of(Outcome::stalled, RoundCause::signal), RoundCause::stall);
  EXPECT_EQ(cause_of(Outcome::membership_changed, std::nullopt), RoundCause::lost_node);
  EXPECT_EQ(cause_of(Outcome::peer_failed, std::nullopt), RoundCause::peer_failed);
  EXPECT_EQ(cause_of(Outcome::succeeded, std::nullopt), std::nullopt);
  EXPECT_EQ(cause_of(Outcome::signaled, std::nullopt), std::nullopt);
}

TEST(Metrics, TheAgentsOwnFiguresAreRead) {
  auto p = read_process_figures();
  EXPECT_GT(p.resident_bytes, 0U);
  EXPECT_GT(p.start_time_seconds, 1.6e9);
  EXPECT_GE(p.cpu_seconds, 0.0);
}

}  // namespace
}  // namespace ddprun::agent
