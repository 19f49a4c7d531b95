// Prometheus metrics through the ddprun binary (issue 41 §3): GET /metrics on --metrics-port
// (and on TORCHELASTIC_HEALTH_CHECK_PORT's server) while a job runs, fails, restarts and runs
// again; the text passes `promtool check metrics` (Debian's prometheus package) where it is
// installed, and must under CI=true.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>

#include "support/raw_tcp.hpp"
#include "support/subprocess.hpp"

using namespace ddprun::test;

namespace {

constexpr auto k_timeout = std::chrono::seconds(60);
constexpr const char* k_promtool = "/usr/bin/promtool";

std::string get(int port, const std::string& path) {
  return exchange_on_loopback(port, "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n");
}

/// The value of the sample `name{...labels...}` whose labels contain `label` ("" for any).
std::optional<double> value_of(const std::string& text, const std::string& name,
                               const std::string& label = "") {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + "{", 0) == 0 && line.find(label) != std::string::npos) {
      return std::stod(line.substr(line.rfind(' ') + 1));
    }
  }
  return std::nullopt;
}

std::string body_of(const std::string& reply) {
  auto at = reply.find("\r\n\r\n");
  return at == std::string::npos ? "" : reply.substr(at + 4);
}

/// `promtool check metrics` on `text`: its output, or nullopt where promtool is missing.
std::optional<RunResult> promtool_check(const std::string& text) {
  if (access(k_promtool, X_OK) != 0) {
    return std::nullopt;
  }
  auto dir = make_temp_dir("ddprun-metrics-");
  std::ofstream(dir + "/metrics.txt") << text;
  return run(
      {"/bin/sh", "-c", std::string(k_promtool) + " check metrics < " + dir + "/metrics.txt"},
      RunOptions{{}, {}, "", k_timeout});
}

}  // namespace

// A job whose attempt 0 fails with exit code 3 and whose attempt 1 runs until the test lets it
// end: the metrics say so while it runs.
TEST(MetricsE2E, ValuesFollowAJobThroughARestart) {
  const int port = free_port();
  auto dir = make_temp_dir("ddprun-metrics-job-");
  const std::string script =
      "[ \"$TORCHELASTIC_RESTART_COUNT\" = 0 ] && exit 3; "
      "while [ ! -f " +
      dir + "/go ]; do sleep 0.05; done";
  auto child = start({ddprun_bin(), "--standalone", "--nproc-per-node", "2", "--max-restarts", "2",
                      "--rdzv-id", "metricsjob", "--metrics-port", std::to_string(port),
                      "--no-python", "/bin/sh", "-c", script},
                     RunOptions{{}, {}, "", k_timeout});
  std::string text;
  ASSERT_TRUE(eventually(
      [&] {
        text = body_of(get(port, "/metrics"));
        return value_of(text, "ddprun_worker_group_attempt") == 1.0 &&
               value_of(text, "ddprun_workers_running") == 2.0;
      },
      std::chrono::seconds(30)))
      << text << read_file(child.err_path);
  EXPECT_NE(text.find(R"(ddprun_workers_running{run_id=")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(,role="default"} 2)"), std::string::npos) << text;
  EXPECT_EQ(value_of(text, "ddprun_restarts_total", R"(cause="exit_code")"), 1.0) << text;
  EXPECT_EQ(value_of(text, "ddprun_failed_rounds_total", R"(cause="exit_code")"), 1.0) << text;
  EXPECT_EQ(value_of(text, "ddprun_restarts_total", R"(cause="signal")"), 0.0) << text;
  EXPECT_EQ(value_of(text, "ddprun_state", R"(state="running")"), 1.0) << text;
  EXPECT_EQ(value_of(text, "ddprun_rendezvous_join_seconds_count"), 2.0) << text;
  EXPECT_EQ(value_of(text, "ddprun_stall_timeout_seconds", R"(basis="off")"), 0.0) << text;
  EXPECT_GE(value_of(text, "ddprun_seconds_since_progress").value_or(-1), 0.0) << text;
  EXPECT_GT(value_of(text, "process_resident_memory_bytes").value_or(0), 0.0) << text;
  EXPECT_EQ(get(port, "/health").rfind("HTTP/1.1 404", 0), 0u) << "no health semantics here";
  if (auto check = promtool_check(text)) {
    EXPECT_EQ(check->status, 0) << check->out << check->err << "\n" << text;
  } else {
    EXPECT_EQ(std::getenv("CI"), nullptr) << k_promtool << " is missing under CI";
  }
  std::ofstream(dir + "/go") << "";
  EXPECT_EQ(wait_for(child.pid, k_timeout), 0) << read_file(child.err_path);
}

// The health port's server answers /metrics too, beside /health.
TEST(MetricsE2E, TheHealthPortServesThemToo) {
  const int port = free_port();
  auto child = start(
      {ddprun_bin(), "--standalone", "--nproc-per-node", "1", "--stall-timeout", "30",
       "--no-python", "/bin/sleep", "4"},
      RunOptions{{{"TORCHELASTIC_HEALTH_CHECK_PORT", std::to_string(port)}}, {}, "", k_timeout});
  std::string text;
  ASSERT_TRUE(eventually(
      [&] {
        text = body_of(get(port, "/metrics"));
        return value_of(text, "ddprun_workers_running") == 1.0;
      },
      std::chrono::seconds(20)))
      << text;
  EXPECT_EQ(value_of(text, "ddprun_stall_timeout_seconds", R"(basis="set")"), 30.0) << text;
  EXPECT_EQ(get(port, "/health").rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(wait_for(child.pid, k_timeout), 0) << read_file(child.err_path);
}

TEST(MetricsE2E, ABadPortIsOneLineAndExitTwo) {
  auto r = run({ddprun_bin(), "--standalone", "--metrics-port", "70000", "--no-python", "true"},
               RunOptions{{}, {}, "", k_timeout});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("70000"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("a port number 0-65535"), std::string::npos) << r.err;
}
