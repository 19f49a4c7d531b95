// Client connection management: connect with bounded exponential backoff, the per-operation
// deadline (Asio's check_deadline pattern: a timer that closes the socket, since Boost 1.74
// has no awaitable operators), and the framed read/write primitives.

#include "ddprun/store/client.hpp"

#include "ddprun/store/auth.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "nonce.hpp"

namespace ddprun::store {

using asio::ip::tcp;
using steady = std::chrono::steady_clock;

Client::Client(asio::io_context& io, ClientOptions options)
    : io_(io),
      options_(std::move(options)),
      socket_(io),
      deadline_(io),
      alive_(std::make_shared<int>(0)) {}

Client::~Client() {
  alive_.reset();
  close();
}

void Client::close() {
  boost::system::error_code ec;
  socket_.close(ec);
  connected_ = false;
}

bool Client::is_connected() const { return connected_; }

void Client::arm(std::chrono::milliseconds timeout) {
  timed_out_ = false;
  op_budget_ = timeout;
  const std::uint64_t gen = ++op_gen_;
  deadline_.expires_after(timeout);
  deadline_.async_wait(
      [this, gen, alive = std::weak_ptr<int>(alive_)](const boost::system::error_code& ec) {
        if (ec || alive.expired() || gen != op_gen_) {
          return;
        }
        timed_out_ = true;
        boost::system::error_code ignored;
        socket_.close(ignored);
      });
}

void Client::disarm() {
  ++op_gen_;
  deadline_.cancel();
}

std::string Client::dialect_label() const {
  return options_.detect_dialect ? std::string("dialect detection")
                                 : fmt::format("dialect {}", to_string(options_.dialect));
}

Error Client::io_error(const boost::system::error_code& ec) const {
  // A request failed in some dialect: say which (a server of another version closes or
  // ignores it). Connecting exchanged nothing worth naming.
  const bool connecting = std::string_view(op_name_) == "connect";
  const auto where =
      fmt::format("store: {} on {}:{}{}", op_name_, options_.host, options_.port,
                  connecting ? std::string() : fmt::format(" in {}", dialect_label()));
  if (timed_out_) {
    return make_error(ErrorCode::timeout,
                      fmt::format("{} timed out after {} ms", where, op_budget_.count()));
  }
  const bool closed = ec == asio::error::eof || ec == asio::error::connection_reset;
  return make_error(closed ? ErrorCode::closed : ErrorCode::io,
                    fmt::format("{}: {}", where, ec.message()));
}

asio::awaitable<Result<void>> Client::open_socket(std::chrono::milliseconds budget) {
  close();
  op_name_ = "connect";
  arm(budget);
  boost::system::error_code ec;
  tcp::resolver resolver(io_);
  const auto endpoints = co_await resolver.async_resolve(
      options_.host, std::to_string(options_.port), asio::redirect_error(asio::use_awaitable, ec));
  if (!ec && !timed_out_) {
    co_await asio::async_connect(socket_, endpoints, asio::redirect_error(asio::use_awaitable, ec));
  }
  if (timed_out_ && !ec) {
    ec = asio::error::timed_out;
  }
  if (!ec) {
    socket_.set_option(tcp::no_delay(true), ec);
  }
  if (!ec && options_.dialect == Dialect::d2 && !options_.detect_dialect) {
    const std::string hello = encode_validate();
    co_await asio::async_write(socket_, asio::buffer(hello),
                               asio::redirect_error(asio::use_awaitable, ec));
  }
  disarm();
  if (ec) {
    close();
    co_return io_error(ec);
  }
  co_return Result<void>{};
}

asio::awaitable<Result<void>> Client::connect_once(std::chrono::milliseconds budget) {
  close();
  if (options_.detect_dialect) {
    auto found = co_await detect(budget);
    if (!found) {
      co_return found;
    }
  }
  if (!socket_.is_open()) {
    auto opened = co_await open_socket(budget);
    if (!opened) {
      co_return opened;
    }
  }
  if (options_.auth != AuthMode::off) {
    arm(budget);
    auto auth = co_await authenticate();
    disarm();
    if (!auth) {
      close();
      co_return auth;
    }
  }
  connected_ = true;
  co_return Result<void>{};
}

asio::awaitable<Result<std::string>> Client::exchange(std::string key, std::string expected) {
  auto sent = co_await send(Request{Op::compare_set, std::move(key), std::move(expected)});
  if (!sent) {
    co_return sent.error();
  }
  co_return co_await read_bytes();
}

asio::awaitable<Result<void>> Client::authenticate() {
  op_name_ = "authenticate";
  const std::string where = fmt::format("{}:{}", options_.host, options_.port);
  if (options_.auth == AuthMode::probe) {
    auto reply = co_await exchange(std::string(k_auth_probe_key), std::string(k_auth_probe_value));
    if (!reply) {
      co_return reply.error();
    }
    co_return check_probe_reply(*reply, where);
  }
  const std::string nonce = random_nonce_hex();
  auto hello = co_await exchange(std::string(k_auth_hello_key), nonce);
  if (!hello) {
    co_return hello.error();
  }
  auto proof = check_hello_reply(options_.token, nonce, *hello, where);
  if (!proof) {
    co_return proof.error();
  }
  auto final_reply = co_await exchange(std::string(k_auth_proof_key), std::move(*proof));
  if (!final_reply) {
    co_return final_reply.error();
  }
  co_return check_final_reply(*final_reply, where);
}

asio::awaitable<Result<void>> Client::connect() {
  if (in_flight_) {
    co_return make_error(ErrorCode::internal, "store: connect while an operation is in flight");
  }
  in_flight_ = true;
  op_name_ = "connect";
  const auto deadline = steady::now() + options_.connect_timeout;
  auto backoff = k_initial_backoff;
  asio::steady_timer pause(io_);
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
    auto result = co_await connect_once(std::max(left, std::chrono::milliseconds(1)));
    const bool final = !result && (result.error().code == ErrorCode::config ||
                                   result.error().code == ErrorCode::protocol);
    if (final) {
      in_flight_ = false;  // a wrong token or a server that is no TCPStore: retrying won't help
      co_return result;
    }
    if (result || steady::now() + backoff >= deadline) {
      in_flight_ = false;
      if (!result) {
        co_return make_error(result.error().code,
                             fmt::format("{} (gave up after {} ms)", result.error().message,
                                         options_.connect_timeout.count()));
      }
      co_return result;
    }
    pause.expires_after(backoff);
    boost::system::error_code ec;
    co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    backoff = std::min(backoff * 2, k_max_backoff);
  }
}

asio::awaitable<Result<void>> Client::begin(const char* op, std::chrono::milliseconds timeout) {
  if (in_flight_) {
    co_return make_error(ErrorCode::internal,
                         fmt::format("store: {} while another operation is in flight", op));
  }
  if (!connected_) {
    auto c = co_await connect();
    if (!c) {
      co_return c;
    }
  }
  in_flight_ = true;
  op_name_ = op;
  arm(timeout);
  co_return Result<void>{};
}

template <typename T>
Result<T> Client::finish(Result<T> result) {
  disarm();
  in_flight_ = false;
  if (!result) {
    close();  // the stream may hold a stale reply; start over next time
  }
  return result;
}

template Result<void> Client::finish(Result<void>);
template Result<bool> Client::finish(Result<bool>);
template Result<std::int64_t> Client::finish(Result<std::int64_t>);
template Result<std::string> Client::finish(Result<std::string>);
template Result<std::vector<std::string>> Client::finish(Result<std::vector<std::string>>);

asio::awaitable<Result<void>> Client::send_raw(std::string bytes) {
  boost::system::error_code ec;
  co_await asio::async_write(socket_, asio::buffer(bytes),
                             asio::redirect_error(asio::use_awaitable, ec));
  if (ec) {
    co_return io_error(ec);
  }
  co_return Result<void>{};
}

asio::awaitable<Result<void>> Client::send(const Request& request) {
  auto bytes = encode_request(options_.dialect, request);
  if (!bytes) {
    co_return bytes.error();
  }
  co_return co_await send_raw(std::move(*bytes));
}

asio::awaitable<Result<std::string>> Client::read_exact(std::size_t n) {
  std::string buf(n, '\0');
  boost::system::error_code ec;
  co_await asio::async_read(socket_, asio::buffer(buf),
                            asio::redirect_error(asio::use_awaitable, ec));
  if (ec) {
    co_return io_error(ec);
  }
  co_return buf;
}

asio::awaitable<Result<std::uint8_t>> Client::read_u8() {
  auto b = co_await read_exact(1);
  if (!b) {
    co_return b.error();
  }
  co_return static_cast<std::uint8_t>((*b)[0]);
}

asio::awaitable<Result<std::int64_t>> Client::read_i64() {
  auto b = co_await read_exact(sizeof(std::uint64_t));
  if (!b) {
    co_return b.error();
  }
  co_return static_cast<std::int64_t>(get_u64(*b));
}

asio::awaitable<Result<std::string>> Client::read_bytes() {
  auto len = co_await read_i64();
  if (!len) {
    co_return len.error();
  }
  const auto n = static_cast<std::uint64_t>(*len);
  if (n > options_.max_reply_bytes) {
    co_return make_error(ErrorCode::protocol, fmt::format("store: {} reply of {} bytes exceeds {}",
                                                          op_name_, n, options_.max_reply_bytes));
  }
  co_return co_await read_exact(static_cast<std::size_t>(n));
}

asio::awaitable<Result<std::vector<std::string>>> Client::read_values(std::size_t n) {
  std::vector<std::string> values;
  for (std::size_t i = 0; i < n; ++i) {
    auto v = co_await read_bytes();
    if (!v) {
      co_return v.error();
    }
    values.push_back(std::move(*v));
  }
  co_return values;
}

}  // namespace ddprun::store
