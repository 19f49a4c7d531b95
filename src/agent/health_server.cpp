// The health-check server. One coroutine accepts; each connection is one short coroutine that
// reads one request (Beast's parser, with a small header limit and no body), writes the answer
// of answer_health() and closes. The state the coroutines share is held by shared_ptr: the
// server object can go (the agent is done) while a session's frame still waits in the
// io_context, which destroys it later without resuming it. Everything runs on the agent's one
// thread, so the snapshot source reads the supervisor without locks.

#include "ddprun/agent/health_server.hpp"

#include "ddprun/util/strings.hpp"

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <spdlog/spdlog.h>

namespace ddprun::agent {

namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;
using boost::system::error_code;

namespace {

constexpr auto k_io_timeout = std::chrono::seconds(5);
constexpr std::uint32_t k_header_limit = 8 * 1024;
constexpr int k_max_sessions = 8;
constexpr int k_http_11 = 11;
constexpr const char* k_any_ipv4 = "0.0.0.0";
constexpr double k_ms_per_s = 1000.0;

constexpr auto k_await_ec = [](error_code& ec) {
  return asio::redirect_error(asio::use_awaitable, ec);
};

/// A read that ended because the client went away or was too slow: nothing to answer.
bool client_gone(const error_code& ec) {
  return ec == http::error::end_of_stream || ec == beast::error::timeout ||
         ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::error::operation_aborted;
}

}  // namespace

struct HealthServer::State {
  State(asio::io_context& ctx, std::chrono::milliseconds t, Source s, MetricsSource m)
      : acceptor(ctx), timeout(t), source(std::move(s)), metrics(std::move(m)) {}
  tcp::acceptor acceptor;
  std::chrono::milliseconds timeout;
  Source source;          ///< null: a metrics-only port
  MetricsSource metrics;  ///< null: no /metrics
  int sessions = 0;
};

namespace {

using State = HealthServer::State;

http::response<http::string_body> make_response(const HealthReply& reply, bool head,
                                                unsigned version) {
  http::response<http::string_body> res{static_cast<http::status>(reply.status), version};
  res.set(http::field::server, "ddprun");
  res.set(http::field::content_type, reply.content_type);
  res.set(http::field::cache_control, "no-store");
  res.keep_alive(false);
  res.body() = reply.body;
  res.prepare_payload();
  if (head) {
    res.body().clear();  // Content-Length stays that of the GET answer
  }
  return res;
}

HealthReply answer(State& state, const http::request<http::empty_body>& req) {
  const auto method = std::string(req.method_string());
  const auto target = std::string(req.target());
  if (state.metrics && is_metrics_path(target)) {
    return answer_metrics(method, state.metrics());
  }
  if (!state.source) {
    return metrics_only_not_found();
  }
  return answer_health(method, target, state.source(), state.timeout);
}

asio::awaitable<void> session(std::shared_ptr<State> state, tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  http::request_parser<http::empty_body> parser;
  parser.header_limit(k_header_limit);
  error_code ec;
  stream.expires_after(k_io_timeout);
  co_await http::async_read(stream, buffer, parser, k_await_ec(ec));
  if (!client_gone(ec)) {
    const bool parsed = !ec;
    const auto& req = parser.get();
    auto reply = parsed ? answer(*state, req) : bad_health_request();
    auto res = make_response(reply, parsed && req.method() == http::verb::head,
                             parsed ? req.version() : k_http_11);
    stream.expires_after(k_io_timeout);
    co_await http::async_write(stream, res, k_await_ec(ec));
  }
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  --state->sessions;
}

asio::awaitable<void> accept_loop(std::shared_ptr<State> state) {
  while (state->acceptor.is_open()) {
    error_code ec;
    auto socket = co_await state->acceptor.async_accept(k_await_ec(ec));
    if (ec == asio::error::operation_aborted || !state->acceptor.is_open()) {
      co_return;
    }
    if (ec || state->sessions >= k_max_sessions) {
      continue;  // a failed accept, or too many probes at once: this one is dropped
    }
    ++state->sessions;
    asio::co_spawn(state->acceptor.get_executor(), session(state, std::move(socket)),
                   asio::detached);
  }
}

Result<void> listen_on(tcp::acceptor& acceptor, const std::string& address, int port) {
  error_code ec;
  auto ip = asio::ip::make_address(address, ec);
  const tcp::endpoint at(ip, static_cast<unsigned short>(port));
  if (!ec) {
    (void)acceptor.open(at.protocol(), ec);
  }
  if (!ec) {
    (void)acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    (void)acceptor.bind(at, ec);
  }
  if (!ec) {
    (void)acceptor.listen(asio::socket_base::max_listen_connections, ec);
  }
  if (ec) {
    return make_error(ErrorCode::io, "cannot listen on " + address + ":" + std::to_string(port) +
                                         ": " + ec.message());
  }
  return {};
}

}  // namespace

Result<std::unique_ptr<HealthServer>> HealthServer::start(asio::io_context& ctx,
                                                          const std::string& address, int port,
                                                          std::chrono::milliseconds timeout,
                                                          Source source, MetricsSource metrics) {
  auto state = std::make_shared<State>(ctx, timeout, std::move(source), std::move(metrics));
  if (auto ok = listen_on(state->acceptor, address, port); !ok) {
    return ok.error();
  }
  asio::co_spawn(ctx, accept_loop(state), asio::detached);
  return std::unique_ptr<HealthServer>(new HealthServer(std::move(state)));
}

HealthServer::HealthServer(std::shared_ptr<State> state) : state_(std::move(state)) {}

HealthServer::~HealthServer() {
  error_code ec;
  (void)state_->acceptor.close(ec);
}

int HealthServer::port() const {
  error_code ec;
  return state_->acceptor.local_endpoint(ec).port();
}

std::unique_ptr<HealthServer> make_health_server(asio::io_context& ctx,
                                                 const std::optional<std::string>& text,
                                                 std::chrono::milliseconds stall_timeout,
                                                 HealthServer::Source source,
                                                 HealthServer::MetricsSource metrics) {
  if (!text) {
    return nullptr;
  }
  auto port = parse_health_port(*text);
  if (!port) {
    spdlog::warn("{}; ignored, no health check server started", port.error().message);
    return nullptr;
  }
  const auto timeout = health_timeout(stall_timeout);
  const bool with_metrics = static_cast<bool>(metrics);
  auto server =
      HealthServer::start(ctx, k_any_ipv4, *port, timeout, std::move(source), std::move(metrics));
  if (!server) {
    spdlog::warn("{}={}: {}; the job runs without a health check server", k_health_port_env, *text,
                 server.error().message);
    return nullptr;
  }
  spdlog::info(
      "health check server on port {}: GET /health answers 503 after {} s without "
      "worker progress{}",
      (*server)->port(), static_cast<double>(timeout.count()) / k_ms_per_s,
      with_metrics ? "; GET /metrics gives Prometheus metrics" : "");
  return std::move(*server);
}

std::unique_ptr<HealthServer> make_metrics_server(asio::io_context& ctx, int port,
                                                  HealthServer::MetricsSource metrics) {
  auto server = HealthServer::start(ctx, k_any_ipv4, port, std::chrono::milliseconds(0), nullptr,
                                    std::move(metrics));
  if (!server) {
    spdlog::warn("--metrics-port {}: {}; the job runs without a metrics server", port,
                 server.error().message);
    return nullptr;
  }
  spdlog::info("metrics server on port {}: GET /metrics gives Prometheus metrics",
               (*server)->port());
  return std::move(*server);
}

}  // namespace ddprun::agent
