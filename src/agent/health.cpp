// The health endpoint's pure decisions; src/agent/health_server.cpp does the HTTP.

#include "ddprun/agent/health.hpp"

#include "ddprun/util/strings.hpp"

#include <nlohmann/json.hpp>

#include <cmath>

namespace ddprun::agent {

namespace {

constexpr int k_max_port = 65535;
constexpr int k_ok = 200;
constexpr int k_bad_request = 400;
constexpr int k_not_found = 404;
constexpr int k_bad_method = 405;
constexpr int k_unavailable = 503;
constexpr double k_ms_per_s = 1000.0;
constexpr double k_centi = 100.0;

/// Seconds with two decimals: a probe needs no more, and the JSON stays short.
double round_centi(double seconds) { return std::round(seconds * k_centi) / k_centi; }

std::string body_of(const HealthSnapshot& s, std::chrono::milliseconds timeout, bool healthy) {
  nlohmann::json j;
  j["state"] = s.state;
  j["round"] = s.round;
  j["workers_running"] = s.workers_running;
  j["seconds_since_progress"] =
      s.seconds_since_progress ? nlohmann::json(round_centi(*s.seconds_since_progress)) : nullptr;
  j["timeout_seconds"] = static_cast<double>(timeout.count()) / k_ms_per_s;
  j["healthy"] = healthy;
  return j.dump() + "\n";
}

std::string_view path_of(std::string_view target) { return target.substr(0, target.find('?')); }

std::string error_body(std::string_view message) {
  return nlohmann::json{{"error", message}}.dump() + "\n";
}

}  // namespace

std::string_view to_string(GroupPhase phase) {
  switch (phase) {
    case GroupPhase::rendezvous:
      return "rendezvous";
    case GroupPhase::running:
      return "running";
    case GroupPhase::stopping:
      return "stopping";
    case GroupPhase::finished:
      break;
  }
  return "finished";
}

Result<int> parse_health_port(std::string_view text) {
  auto port = util::parse_int(text);
  if (!port || *port < 0 || *port > k_max_port) {
    return make_error(ErrorCode::usage, std::string(k_health_port_env) + " " + util::quoted(text) +
                                            ": expected a port number 0-65535");
  }
  return static_cast<int>(*port);
}

std::chrono::milliseconds health_timeout(std::chrono::milliseconds stall_timeout) {
  if (stall_timeout.count() > 0) {
    return stall_timeout;
  }
  return k_default_health_timeout;
}

bool is_healthy(const HealthSnapshot& snapshot, std::chrono::milliseconds timeout) {
  if (!snapshot.seconds_since_progress) {
    return true;
  }
  return *snapshot.seconds_since_progress * k_ms_per_s <= static_cast<double>(timeout.count());
}

HealthReply answer_health(std::string_view method, std::string_view target,
                          const HealthSnapshot& snapshot, std::chrono::milliseconds timeout) {
  const auto path = path_of(target);
  if (path != "/" && path != "/health") {
    return {k_not_found, error_body("not found: GET / or /health")};
  }
  if (method != "GET" && method != "HEAD") {
    return {k_bad_method, error_body("method not allowed: GET or HEAD")};
  }
  const bool healthy = is_healthy(snapshot, timeout);
  return {healthy ? k_ok : k_unavailable, body_of(snapshot, timeout, healthy)};
}

bool is_metrics_path(std::string_view target) { return path_of(target) == "/metrics"; }

HealthReply answer_metrics(std::string_view method, std::string exposition) {
  if (method != "GET" && method != "HEAD") {
    return {k_bad_method, error_body("method not allowed: GET or HEAD")};
  }
  return {k_ok, std::move(exposition), std::string(k_metrics_content_type)};
}

HealthReply metrics_only_not_found() {
  return {k_not_found, error_body("not found: GET /metrics")};
}

HealthReply bad_health_request() {
  return {k_bad_request, error_body("bad request: expected GET / or /health over HTTP/1.x")};
}

}  // namespace ddprun::agent
