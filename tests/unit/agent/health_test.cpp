// The health endpoint's decisions: the port variable, the timeout, and the answers.

#include "ddprun/agent/health.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ddprun::agent {
namespace {

using namespace std::chrono_literals;

HealthSnapshot running(double since) { return {"running", 2, 3, since}; }

TEST(HealthPort, AcceptsPortsAndNamesTheVariableOtherwise) {
  EXPECT_EQ(*parse_health_port("8080"), 8080);
  EXPECT_EQ(*parse_health_port("0"), 0);
  for (const char* bad : {"", "x", "-1", "65536", "80a"}) {
    auto r = parse_health_port(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().message, "TORCHELASTIC_HEALTH_CHECK_PORT '" + std::string(bad) +
                                     "': expected a port number 0-65535");
  }
}

TEST(HealthTimeout, StallTimeoutWhenSetElseTorchruns60s) {
  EXPECT_EQ(health_timeout(0ms), 60s);
  EXPECT_EQ(health_timeout(2500ms), 2500ms);
}

TEST(Health, HealthyUntilTheTimeoutAndWhileNoGroupRuns) {
  EXPECT_TRUE(is_healthy(running(59.9), 60s));
  EXPECT_TRUE(is_healthy(running(60.0), 60s));
  EXPECT_FALSE(is_healthy(running(60.01), 60s));
  EXPECT_TRUE(is_healthy({"rendezvous", 0, 0, std::nullopt}, 1ms));
}

TEST(Health, GetAnswers200Or503WithTheSameJson) {
  auto ok = answer_health("GET", "/health", running(1.234), 60s);
  EXPECT_EQ(ok.status, 200);
  auto j = nlohmann::json::parse(ok.body);
  EXPECT_EQ(j["state"], "running");
  EXPECT_EQ(j["round"], 2);
  EXPECT_EQ(j["workers_running"], 3);
  EXPECT_DOUBLE_EQ(j["seconds_since_progress"].get<double>(), 1.23);
  EXPECT_DOUBLE_EQ(j["timeout_seconds"].get<double>(), 60.0);
  EXPECT_EQ(j["healthy"], true);
  auto stale = answer_health("GET", "/", running(61), 60s);
  EXPECT_EQ(stale.status, 503);
  auto k = nlohmann::json::parse(stale.body);
  EXPECT_EQ(k["healthy"], false);
  EXPECT_EQ(k["state"], "running");
  auto joining = nlohmann::json::parse(
      answer_health("GET", "/health?verbose=1", {"rendezvous", 0, 0, std::nullopt}, 60s).body);
  EXPECT_TRUE(joining["seconds_since_progress"].is_null());
}

TEST(Health, OtherPathsMethodsAndBadRequests) {
  EXPECT_EQ(answer_health("HEAD", "/health", running(1), 60s).status, 200);
  EXPECT_EQ(answer_health("GET", "/metrics", running(1), 60s).status, 404);
  EXPECT_EQ(answer_health("GET", "/healthz", running(1), 60s).status, 404);
  EXPECT_EQ(answer_health("POST", "/health", running(1), 60s).status, 405);
  auto bad = bad_health_request();
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("bad request"), std::string::npos);
}

}  // namespace
}  // namespace ddprun::agent
