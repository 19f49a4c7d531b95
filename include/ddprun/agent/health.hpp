#pragma once
// The health-check endpoint's decisions (TORCHELASTIC_HEALTH_CHECK_PORT): which port, the
// liveness timeout, and the answer to one request. torchrun's open-source server is a stub that
// logs "No health check server started"; ddprun serves these answers over HTTP
// (health_server.hpp), so a Kubernetes liveness probe or a cluster monitor can use them.

#include "ddprun/util/result.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace ddprun::agent {

/// The environment variable torch's agent reads for the port (torch >= 2.4).
inline constexpr std::string_view k_health_port_env = "TORCHELASTIC_HEALTH_CHECK_PORT";

/// torchrun's liveness timeout when --stall-timeout is off (create_healthcheck_server(timeout=60)).
inline constexpr std::chrono::seconds k_default_health_timeout{60};

/// What the agent is doing, as the endpoint reports it.
/// Where the agent's worker group is in its life.
enum class GroupPhase { rendezvous, running, stopping, finished };

/// "rendezvous", "running", "stopping" or "finished".
std::string_view to_string(GroupPhase phase);

struct HealthSnapshot {
  std::string state;        ///< to_string(GroupPhase)
  int round = 0;            ///< the worker group's restart count (TORCHELASTIC_RESTART_COUNT)
  int workers_running = 0;  ///< this node's workers still alive
  /// Seconds since the workers' last progress (output or a file-timer request, as the stall
  /// watchdog sees it, counted from the start of the group); nullopt while no group runs.
  std::optional<double> seconds_since_progress;
};

/// One HTTP answer: the status code and its JSON body ("" for none).
struct HealthReply {
  int status = 0;
  std::string body;
  std::string content_type = "application/json";

  friend bool operator==(const HealthReply&, const HealthReply&) = default;
};

/// The port in TORCHELASTIC_HEALTH_CHECK_PORT: 0-65535 (0: a free port); an error quotes the
/// text and says what was expected.
Result<int> parse_health_port(std::string_view text);

/// The liveness timeout: --stall-timeout when set (> 0), else torchrun's 60 s.
std::chrono::milliseconds health_timeout(std::chrono::milliseconds stall_timeout);

/// Healthy while no worker group runs (torch's alive callback answers "now" then), or while the
/// last progress is at most `timeout` old.
bool is_healthy(const HealthSnapshot& snapshot, std::chrono::milliseconds timeout);

/// The answer to a parsed request: GET or HEAD of "/" or "/health" (a query string is ignored)
/// gets 200 when healthy, else 503, with the same JSON either way (state, round,
/// workers_running, seconds_since_progress, timeout_seconds, healthy); any other path is 404,
/// another method 405.
HealthReply answer_health(std::string_view method, std::string_view target,
                          const HealthSnapshot& snapshot, std::chrono::milliseconds timeout);

/// The answer to a request that could not be parsed.
HealthReply bad_health_request();

/// Prometheus' text format, as /metrics answers.
inline constexpr std::string_view k_metrics_content_type =
    "text/plain; version=0.0.4; charset=utf-8";

/// True for the path /metrics (a query string is ignored).
bool is_metrics_path(std::string_view target);

/// GET or HEAD /metrics: 200 with `exposition`; another method 405.
HealthReply answer_metrics(std::string_view method, std::string exposition);

/// Any other path on a port that serves only /metrics (--metrics-port): 404.
HealthReply metrics_only_not_found();

}  // namespace ddprun::agent
