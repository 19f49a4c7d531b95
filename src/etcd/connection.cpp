// One connection to one member. Beast's tcp_stream carries the deadline: expires_after() before
// each step bounds connect, the TLS handshake, writes and reads; a step that runs past it
// completes with beast::error::timeout and the stream is closed.

#include "connection.hpp"

#include <fmt/format.h>

namespace ddprun::etcd {
namespace {

using boost::system::error_code;
constexpr auto k_await_ec = [](error_code& ec) {
  return asio::redirect_error(asio::use_awaitable, ec);
};

bool is_ip_literal(const std::string& host) {
  error_code ec;
  (void)asio::ip::make_address(host, ec);
  return !ec;
}

}  // namespace

Connection::Connection(asio::any_io_executor ex, asio::ssl::context* tls, Endpoint endpoint,
                       std::size_t index)
    : endpoint_(std::move(endpoint)), index_(index) {
  if (endpoint_.tls && tls != nullptr) {
    tls_ = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(ex, *tls);
  } else {
    plain_ = std::make_unique<beast::tcp_stream>(ex);
  }
}

beast::tcp_stream& Connection::tcp() { return tls_ ? beast::get_lowest_layer(*tls_) : *plain_; }

Error Connection::fail(std::string_view what, const error_code& ec) const {
  const auto code = ec == beast::error::timeout ? ErrorCode::timeout : ErrorCode::io;
  return make_error(code, fmt::format("{} {}: {}", to_string(endpoint_), what, ec.message()));
}

asio::awaitable<Result<void>> Connection::connect(std::chrono::milliseconds timeout) {
  error_code ec;
  auto ex = co_await asio::this_coro::executor;
  asio::ip::tcp::resolver resolver(ex);
  // The resolver runs getaddrinfo on a private thread; a timer bounds it like the rest.
  asio::steady_timer guard(ex, timeout);
  guard.async_wait([&resolver](const error_code& e) {
    if (!e) {
      resolver.cancel();
    }
  });
  auto hosts = co_await resolver.async_resolve(endpoint_.host, std::to_string(endpoint_.port),
                                               k_await_ec(ec));
  guard.cancel();
  if (ec) {
    co_return fail("resolve", ec);
  }
  tcp().expires_after(timeout);
  co_await tcp().async_connect(hosts, k_await_ec(ec));
  if (ec) {
    co_return fail("connect", ec);
  }
  if (tls_) {
    if (!is_ip_literal(endpoint_.host)) {
      (void)SSL_set_tlsext_host_name(tls_->native_handle(), endpoint_.host.c_str());
    }
    tls_->set_verify_callback(asio::ssl::host_name_verification(endpoint_.host));
    co_await tls_->async_handshake(asio::ssl::stream_base::client, k_await_ec(ec));
    if (ec) {
      co_return fail("TLS handshake", ec);
    }
  }
  open_ = true;
  co_return Result<void>{};
}

http::request<http::string_body> Connection::make_request(const std::string& path,
                                                          const std::string& body,
                                                          const std::string& token) const {
  http::request<http::string_body> req{http::verb::post, path, 11};
  req.set(http::field::host, host_header(endpoint_));
  req.set(http::field::content_type, "application/json");
  if (!token.empty()) {
    req.set(http::field::authorization, token);
  }
  req.keep_alive(true);
  req.body() = body;
  req.prepare_payload();
  return req;
}

asio::awaitable<Result<void>> Connection::send(const std::string& path, const std::string& body,
                                               const std::string& token,
                                               std::chrono::milliseconds timeout) {
  auto req = make_request(path, body, token);
  error_code ec;
  tcp().expires_after(timeout);
  if (tls_) {
    co_await http::async_write(*tls_, req, k_await_ec(ec));
  } else {
    co_await http::async_write(*plain_, req, k_await_ec(ec));
  }
  if (ec) {
    open_ = false;
    co_return fail("POST " + path, ec);
  }
  co_return Result<void>{};
}

asio::awaitable<Result<void>> Connection::read_header(StreamParser& parser,
                                                      std::chrono::milliseconds timeout) {
  error_code ec;
  tcp().expires_after(timeout);
  if (tls_) {
    co_await http::async_read_header(*tls_, buffer_, parser, k_await_ec(ec));
  } else {
    co_await http::async_read_header(*plain_, buffer_, parser, k_await_ec(ec));
  }
  if (ec) {
    open_ = false;
    co_return fail("reading the reply", ec);
  }
  co_return Result<void>{};
}

asio::awaitable<Result<void>> Connection::read_some(StreamParser& parser) {
  error_code ec;
  tcp().expires_never();
  if (tls_) {
    co_await http::async_read_some(*tls_, buffer_, parser, k_await_ec(ec));
  } else {
    co_await http::async_read_some(*plain_, buffer_, parser, k_await_ec(ec));
  }
  if (ec) {
    open_ = false;
    co_return fail("reading the stream", ec);
  }
  co_return Result<void>{};
}

asio::awaitable<std::variant<HttpReply, ExchangeError>> Connection::exchange(
    const std::string& path, const std::string& body, const std::string& token,
    std::chrono::milliseconds timeout) {
  auto sent = co_await send(path, body, token, timeout);
  if (!sent) {
    co_return ExchangeError{sent.error(), false};
  }
  StreamParser parser;
  parser.body_limit(k_max_reply_bytes);
  error_code ec;
  tcp().expires_after(timeout);
  if (tls_) {
    co_await http::async_read(*tls_, buffer_, parser, k_await_ec(ec));
  } else {
    co_await http::async_read(*plain_, buffer_, parser, k_await_ec(ec));
  }
  if (ec) {
    open_ = false;
    // An idle connection the member closed (or a member that died while we were idle) fails
    // at once, before any byte of a reply: the request was not processed.
    const bool closed_while_idle = reused_ && !parser.got_some() &&
                                   (ec == http::error::end_of_stream || ec == asio::error::eof ||
                                    ec == asio::error::connection_reset);
    co_return ExchangeError{fail("reading the reply to POST " + path, ec), !closed_while_idle,
                            closed_while_idle};
  }
  if (!parser.get().keep_alive()) {
    close();
  }
  co_return HttpReply{parser.get().result_int(), std::move(parser.get().body())};
}

void Connection::close() {
  open_ = false;
  tcp().close();
}

}  // namespace ddprun::etcd
