// The client's one loop: take a connection to the current member, exchange, and on a
// connection failure or an "unavailable" answer move to the next member, at most once around
// the list. A txn whose request was sent is not resent (it may have been applied), unless the
// connection was an idle one the member had already closed (then it never read the request).

#include "ddprun/etcd/client.hpp"

#include "ddprun/etcd/codec.hpp"
#include "ddprun/util/backoff.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "connection.hpp"
#include "tls_context.hpp"

namespace ddprun::etcd {
namespace {

constexpr unsigned k_http_ok = 200;
constexpr std::size_t k_max_idle_connections = 8;

bool any_tls(const std::vector<Endpoint>& endpoints) {
  return std::any_of(endpoints.begin(), endpoints.end(), [](const Endpoint& e) { return e.tls; });
}

/// A member in trouble (between leaders, overloaded: it may answer later) is ErrorCode::io, as
/// a member that does not answer; a refusal of the request itself is ErrorCode::protocol.
Error refused(const std::string& path, const Endpoint& at, const ServerError& e) {
  const bool for_now = should_fail_over(e) || is_overloaded(e);
  return make_error(for_now ? ErrorCode::io : ErrorCode::protocol,
                    fmt::format("etcd {} at {}: {} (code {}, HTTP {})", path, to_string(at),
                                e.message, e.grpc_code, e.http_status));
}

}  // namespace

Client::Client(asio::io_context& io, ClientOptions options)
    : io_(io), options_(std::move(options)) {
  current_ = options_.first_member % options_.endpoints.size();  // make() checked: not empty
}

Client::~Client() = default;

Result<std::unique_ptr<Client>> Client::make(asio::io_context& io, ClientOptions options) {
  if (options.endpoints.empty()) {
    return make_error(ErrorCode::config, "etcd: no endpoints");
  }
  std::unique_ptr<Client> client(new Client(io, std::move(options)));
  if (any_tls(client->options_.endpoints)) {
    auto ctx = make_tls_context(client->options_.tls);
    if (!ctx) {
      return ctx.error();
    }
    client->tls_ = std::move(*ctx);
  }
  return client;
}

const Endpoint& Client::current_endpoint() const { return options_.endpoints[current_]; }

asio::awaitable<void> Client::pause(std::chrono::milliseconds d) {
  asio::steady_timer timer(io_, d);
  boost::system::error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

void Client::fail_over() {
  const std::size_t old = current_;
  current_ = (current_ + 1) % options_.endpoints.size();
  std::erase_if(idle_, [old](const auto& c) { return c->index() == old; });
}

void Client::checkin(std::unique_ptr<Connection> c) {
  if (c->is_open() && c->index() == current_ && idle_.size() < k_max_idle_connections) {
    c->mark_reused();
    idle_.push_back(std::move(c));
  }
}

asio::awaitable<Result<void>> Client::ensure_token(Connection& c) {
  if (options_.username.empty() || !token_.empty()) {
    co_return Result<void>{};
  }
  auto outcome = co_await c.exchange("/v3/auth/authenticate",
                                     render_authenticate(options_.username, options_.password), {},
                                     options_.call_timeout);
  if (auto* err = std::get_if<ExchangeError>(&outcome)) {
    co_return err->error;
  }
  auto& reply = std::get<HttpReply>(outcome);
  if (reply.status != k_http_ok) {
    const ServerError e = parse_server_error(reply.status, reply.body);
    if (should_fail_over(e)) {
      co_return refused("/v3/auth/authenticate", c.endpoint(), e);
    }
    co_return make_error(ErrorCode::config,
                         fmt::format("etcd: user \"{}\" cannot log in at {}: {}", options_.username,
                                     to_string(c.endpoint()), e.message));
  }
  auto token = parse_authenticate_reply(reply.body);
  if (!token) {
    co_return token.error();
  }
  token_ = std::move(*token);
  co_return Result<void>{};
}

asio::awaitable<Result<std::unique_ptr<Connection>>> Client::checkout() {
  while (!idle_.empty()) {
    auto c = std::move(idle_.back());
    idle_.pop_back();
    if (c->is_open() && c->index() == current_) {
      co_return c;
    }
  }
  auto c =
      std::make_unique<Connection>(io_.get_executor(), tls_.get(), current_endpoint(), current_);
  auto connected = co_await c->connect(options_.call_timeout);
  if (!connected) {
    if (c->endpoint().tls && !options_.tls.ca_file.empty()) {
      co_return make_error(
          connected.error().code,
          fmt::format("{} (CA file \"{}\")", connected.error().message, options_.tls.ca_file));
    }
    co_return connected.error();
  }
  auto authed = co_await ensure_token(*c);
  if (!authed) {
    co_return authed.error();
  }
  co_return c;
}

asio::awaitable<Result<std::string>> Client::call(std::string_view path_view, std::string body,
                                                  bool idempotent) {
  const std::string path(path_view);
  std::vector<std::string> failures;
  ErrorCode code = ErrorCode::io;
  bool reauthenticated = false;
  int resends = 0;  // of a call etcd refused as overloaded
  for (std::size_t tries = 0; tries < options_.endpoints.size();) {
    auto conn = co_await checkout();
    if (!conn) {
      if (conn.error().code == ErrorCode::config) {
        co_return conn.error();
      }
      failures.push_back(conn.error().message);
      code = conn.error().code;
      fail_over();
      ++tries;
      continue;
    }
    auto outcome = co_await (*conn)->exchange(path, body, token_, options_.call_timeout);
    if (auto* err = std::get_if<ExchangeError>(&outcome)) {
      if (err->stale) {
        continue;  // the pool only holds so many: this ends
      }
      if (err->sent && !idempotent) {
        co_return make_error(err->error.code,
                             fmt::format("etcd {}: {} (sent, so it may have been applied)", path,
                                         err->error.message));
      }
      failures.push_back(err->error.message);
      code = err->error.code;
      fail_over();
      ++tries;
      continue;
    }
    auto reply = std::move(std::get<HttpReply>(outcome));
    const Endpoint at = (*conn)->endpoint();
    checkin(std::move(*conn));
    if (reply.status == k_http_ok) {
      co_return std::move(reply.body);
    }
    const ServerError e = parse_server_error(reply.status, reply.body);
    if (is_stale_token(e) && !options_.username.empty() && !reauthenticated) {
      token_.clear();
      idle_.clear();
      reauthenticated = true;
      continue;
    }
    if (is_overloaded(e) && resends < k_max_overload_resends) {
      co_await pause(overload_pause(resends++, util::random_spread()));
      continue;  // the same member: it refused before proposing, so nothing was applied
    }
    if (!may_retry_elsewhere(e, idempotent)) {
      co_return refused(path, at, e);
    }
    failures.push_back(refused(path, at, e).message);
    code = ErrorCode::io;
    fail_over();
    ++tries;
  }
  co_return make_error(
      code, fmt::format("etcd {}: no member answered: {}", path, fmt::join(failures, "; ")));
}

}  // namespace ddprun::etcd
