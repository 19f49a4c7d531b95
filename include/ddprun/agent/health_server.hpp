#pragma once
// The health-check HTTP server (TORCHELASTIC_HEALTH_CHECK_PORT): the I/O shell around the
// decisions of health.hpp, on the agent's one io_context.

#include "ddprun/agent/health.hpp"
#include "ddprun/net/asio.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace ddprun::agent {

/// Answers GET / and /health, and GET /metrics when it has a metrics source, over HTTP/1.1,
/// one request per connection (Connection: close), each read and write bounded in time, at most
/// a few connections at once (more are closed at accept). A request Beast cannot parse gets
/// 400; nothing a client sends ends the agent. The sources are called on the io_context's
/// thread for each request.
class HealthServer {
 public:
  using Source = std::function<HealthSnapshot()>;
  using MetricsSource = std::function<std::string()>;

  /// Listens on `address`:`port` (0: a free port). An error names the address and the cause
  /// (a port in use among them). Without `source` only /metrics is served (--metrics-port).
  static Result<std::unique_ptr<HealthServer>> start(asio::io_context& ctx,
                                                     const std::string& address, int port,
                                                     std::chrono::milliseconds timeout,
                                                     Source source, MetricsSource metrics = {});
  ~HealthServer();
  HealthServer(const HealthServer&) = delete;
  HealthServer& operator=(const HealthServer&) = delete;

  /// The port it listens on (the chosen one when started with 0).
  int port() const;

  struct State;

 private:
  explicit HealthServer(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

/// The agent's server, from TORCHELASTIC_HEALTH_CHECK_PORT's text (with /metrics when `metrics`
/// is given): none when it is unset. A value
/// that is not a port, or a port that cannot be bound (in use), is one WARNING and no server: the
/// job runs on, as torchrun's runs with its stub. Listens on every IPv4 address, as a probe from
/// the node or the cluster network must reach it; the timeout is health_timeout(stall_timeout).
std::unique_ptr<HealthServer> make_health_server(asio::io_context& ctx,
                                                 const std::optional<std::string>& port_text,
                                                 std::chrono::milliseconds stall_timeout,
                                                 HealthServer::Source source,
                                                 HealthServer::MetricsSource metrics = {});

/// --metrics-port: a server of /metrics alone (no health semantics), on every IPv4 address. A
/// port that cannot be bound is one WARNING and no server: monitoring never ends a job.
std::unique_ptr<HealthServer> make_metrics_server(asio::io_context& ctx, int port,
                                                  HealthServer::MetricsSource metrics);

}  // namespace ddprun::agent
