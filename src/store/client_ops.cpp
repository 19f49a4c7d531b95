// Client operations: each is begin() (connect if needed, arm the deadline), one exchange in
// the configured dialect, finish() (disarm; drop the connection on failure).

#include "ddprun/store/client.hpp"

#include <fmt/format.h>

namespace ddprun::store {
namespace {

Error unexpected_byte(const char* op, std::uint8_t got, std::uint8_t want) {
  return make_error(ErrorCode::protocol,
                    fmt::format("store: {} reply byte {:#04x}, expected {:#04x}", op, got, want));
}

Error missing_op(Op op, Dialect dialect) {
  return make_error(ErrorCode::usage, fmt::format("store: {} does not exist in dialect {}",
                                                  to_string(op), to_string(dialect)));
}

}  // namespace

asio::awaitable<Result<void>> Client::wait_stop(std::vector<std::string> keys) {
  Request r{Op::wait};
  r.keys = std::move(keys);
  auto sent = co_await send(r);
  if (!sent) {
    co_return sent;
  }
  auto b = co_await read_u8();
  if (!b) {
    co_return b.error();
  }
  if (*b != reply::k_stop_waiting) {
    co_return unexpected_byte(op_name_, *b, reply::k_stop_waiting);
  }
  co_return Result<void>{};
}

asio::awaitable<Result<void>> Client::set(std::string key, std::string value) {
  auto ok = co_await begin("set", options_.op_timeout);
  if (!ok) {
    co_return ok;
  }
  co_return finish(co_await send(Request{Op::set, std::move(key), std::move(value)}));
}

asio::awaitable<Result<void>> Client::set_confirmed(std::string key, std::string value) {
  auto ok = co_await begin("set", options_.op_timeout);
  if (!ok) {
    co_return ok;
  }
  Request check{Op::check};
  check.keys.push_back(key);
  const std::string shown = loggable_key(key);
  auto sent = co_await send(Request{Op::set, std::move(key), std::move(value)});
  if (sent) {
    sent = co_await send(check);
  }
  if (!sent) {
    co_return finish(sent);
  }
  auto b = co_await read_u8();
  if (!b) {
    co_return finish(Result<void>(b.error()));
  }
  if (*b != reply::k_ready) {
    co_return finish(Result<void>(make_error(
        ErrorCode::io, fmt::format("store: set on {}:{} in {}: key '{}' is not there after the SET",
                                   options_.host, options_.port, dialect_label(), shown))));
  }
  co_return finish(Result<void>{});
}

asio::awaitable<Result<std::string>> Client::get(std::string key) {
  auto ok = co_await begin("get", options_.op_timeout);
  if (!ok) {
    co_return ok.error();
  }
  std::vector<std::string> keys(1, key);
  auto waited = co_await wait_stop(std::move(keys));
  if (!waited) {
    co_return finish(Result<std::string>(waited.error()));
  }
  auto sent = co_await send(Request{Op::get, std::move(key)});
  if (!sent) {
    co_return finish(Result<std::string>(sent.error()));
  }
  co_return finish(co_await read_bytes());
}

asio::awaitable<Result<std::int64_t>> Client::add(std::string key, std::int64_t delta) {
  auto ok = co_await begin("add", options_.op_timeout);
  if (!ok) {
    co_return ok.error();
  }
  Request r{Op::add, std::move(key)};
  r.number = delta;
  auto sent = co_await send(r);
  if (!sent) {
    co_return finish(Result<std::int64_t>(sent.error()));
  }
  co_return finish(co_await read_i64());
}

asio::awaitable<Result<std::string>> Client::compare_set(std::string key, std::string expected,
                                                         std::string desired) {
  auto ok = co_await begin("compare_set", options_.op_timeout);
  if (!ok) {
    co_return ok.error();
  }
  auto sent = co_await send(
      Request{Op::compare_set, std::move(key), std::move(expected), std::move(desired)});
  if (!sent) {
    co_return finish(Result<std::string>(sent.error()));
  }
  co_return finish(co_await read_bytes());
}

asio::awaitable<Result<void>> Client::wait(std::vector<std::string> keys,
                                           std::chrono::milliseconds timeout) {
  auto ok = co_await begin("wait", timeout);
  if (!ok) {
    co_return ok;
  }
  co_return finish(co_await wait_stop(std::move(keys)));
}

asio::awaitable<Result<bool>> Client::check(std::vector<std::string> keys) {
  auto ok = co_await begin("check", options_.op_timeout);
  if (!ok) {
    co_return ok.error();
  }
  Request r{Op::check};
  r.keys = std::move(keys);
  auto sent = co_await send(r);
  if (!sent) {
    co_return finish(Result<bool>(sent.error()));
  }
  auto b = co_await read_u8();
  if (!b) {
    co_return finish(Result<bool>(b.error()));
  }
  co_return finish(Result<bool>(*b == reply::k_ready));
}

asio::awaitable<Result<bool>> Client::delete_key(std::string key) {
  auto ok = co_await begin("delete_key", options_.op_timeout);
  if (!ok) {
    co_return ok.error();
  }
  auto sent = co_await send(Request{Op::delete_key, std::move(key)});
  if (!sent) {
    co_return finish(Result<bool>(sent.error()));
  }
  auto n = co_await read_i64();
  if (!n) {
    co_return finish(Result<bool>(n.error()));
  }
  co_return finish(Result<bool>(*n == 1));
}

asio::awaitable<Result<std::int64_t>> Client::num_keys() {
  auto ok = co_await begin("num_keys", options_.op_timeout);
  if (!ok) {
    co_return ok.error();
  }
  auto sent = co_await send(Request{Op::get_num_keys});
  if (!sent) {
    co_return finish(Result<std::int64_t>(sent.error()));
  }
  co_return finish(co_await read_i64());
}

asio::awaitable<Result<std::vector<std::string>>> Client::multi_get(std::vector<std::string> keys) {
  using R = Result<std::vector<std::string>>;
  auto ok = co_await begin("multi_get", options_.op_timeout);
  if (!ok) {
    co_return ok.error();
  }
  auto waited = co_await wait_stop(keys);
  if (!waited) {
    co_return finish(R(waited.error()));
  }
  co_return co_await fetch_values(std::move(keys));
}

asio::awaitable<Result<std::vector<std::string>>> Client::fetch_values(
    std::vector<std::string> keys) {
  using R = Result<std::vector<std::string>>;
  const std::size_t n = keys.size();
  Request r{Op::multi_get};
  r.keys = std::move(keys);
  Result<void> sent;
  if (options_.dialect == Dialect::d0) {
    std::string bytes;
    for (auto& key : r.keys) {
      bytes += *encode_request(Dialect::d0, Request{Op::get, key});  // GET is in every dialect
    }
    sent = co_await send_raw(std::move(bytes));
  } else {
    sent = co_await send(r);
  }
  if (!sent) {
    co_return finish(R(sent.error()));
  }
  co_return finish(co_await read_values(n));
}

asio::awaitable<Result<std::vector<std::string>>> Client::multi_get_now(
    std::vector<std::string> keys) {
  auto ok = co_await begin("multi_get", options_.op_timeout);
  if (!ok) {
    co_return ok.error();
  }
  if (options_.dialect == Dialect::d0) {  // its GETs would block on a missing key
    co_return finish(Result<std::vector<std::string>>(missing_op(Op::multi_get, options_.dialect)));
  }
  co_return co_await fetch_values(std::move(keys));
}

asio::awaitable<Result<void>> Client::multi_set(KeyValues pairs) {
  auto ok = co_await begin("multi_set", options_.op_timeout);
  if (!ok) {
    co_return ok;
  }
  std::string bytes;
  if (options_.dialect == Dialect::d0) {
    for (auto& [k, v] : pairs) {
      bytes += *encode_request(Dialect::d0, Request{Op::set, k, v});
    }
  } else {
    Request r{Op::multi_set};
    r.pairs = std::move(pairs);
    bytes = *encode_request(options_.dialect, r);
  }
  co_return finish(co_await send_raw(std::move(bytes)));
}

asio::awaitable<Result<void>> Client::append(std::string key, std::string value) {
  auto ok = co_await begin("append", options_.op_timeout);
  if (!ok) {
    co_return ok;
  }
  if (options_.dialect == Dialect::d0) {
    co_return finish(Result<void>(missing_op(Op::append, options_.dialect)));
  }
  co_return finish(co_await send(Request{Op::append, std::move(key), std::move(value)}));
}

asio::awaitable<Result<std::vector<std::string>>> Client::list_keys() {
  using R = Result<std::vector<std::string>>;
  auto ok = co_await begin("list_keys", options_.op_timeout);
  if (!ok) {
    co_return ok.error();
  }
  if (options_.dialect != Dialect::d2) {  // checked once connected: detection may have run
    co_return finish(R(missing_op(Op::list_keys, options_.dialect)));
  }
  auto sent = co_await send(Request{Op::list_keys});
  if (!sent) {
    co_return finish(R(sent.error()));
  }
  auto n = co_await read_i64();
  if (!n) {
    co_return finish(R(n.error()));
  }
  if (static_cast<std::uint64_t>(*n) > k_max_keys_per_request * 1024) {
    co_return finish(R(make_error(ErrorCode::protocol,
                                  fmt::format("store: list_keys count {} is implausible", *n))));
  }
  co_return finish(co_await read_values(static_cast<std::size_t>(*n)));
}

}  // namespace ddprun::store
