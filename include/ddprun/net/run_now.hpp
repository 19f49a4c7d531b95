#pragma once
// Running one coroutine to completion from synchronous code: the agent's rendezvous setup
// (before its supervisor runs the io_context) and one-shot commands such as `ddprun status`.

#include "ddprun/net/asio.hpp"
#include "ddprun/util/fatal.hpp"

#include <exception>
#include <optional>

namespace ddprun::net {

namespace detail {
template <typename T>
asio::awaitable<void> store_result(asio::awaitable<T> aw, std::optional<T>& out) {
  out.emplace(co_await std::move(aw));
}
}  // namespace detail

/// Runs `aw` on `ctx` until it completes and returns its value; rethrows what it threw. Other
/// work on `ctx` runs alongside but does not keep this waiting once `aw` is done.
template <typename T>
T run_now(asio::io_context& ctx, asio::awaitable<T> aw) {
  std::optional<T> out;
  std::exception_ptr error;
  bool done = false;
  if (ctx.stopped()) {
    ctx.restart();
  }
  asio::co_spawn(ctx, detail::store_result(std::move(aw), out), [&](const std::exception_ptr& e) {
    error = e;
    done = true;
  });
  while (!done && ctx.run_one() > 0) {
  }
  if (ctx.stopped()) {
    ctx.restart();
  }
  if (error) {
    std::rethrow_exception(error);
  }
  if (!out) {
    throw Fatal(make_error(ErrorCode::internal, "a coroutine ended before it completed"));
  }
  return std::move(*out);
}

}  // namespace ddprun::net
