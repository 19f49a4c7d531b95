#pragma once
// Shared by the etcd component tests: run a coroutine to completion on a test's io_context,
// and make a client for a cluster.

#include "ddprun/etcd/client.hpp"

#include <gtest/gtest.h>

#include <optional>

#include "support/etcd_cluster.hpp"

namespace ddprun::etcd::test {

/// Awaits `co` into `out` (co_spawn's completion handler would need a default-constructible T,
/// which Result is not).
template <typename T>
asio::awaitable<void> into(asio::awaitable<T> co, std::optional<T>& out) {
  out.emplace(co_await std::move(co));
}

/// Runs `co` on `io` until it returns (other work, like a lease keeper, keeps running alongside
/// but does not keep this waiting).
template <typename T>
T run_co(asio::io_context& io, asio::awaitable<T> co) {
  std::optional<T> out;
  bool done = false;
  std::exception_ptr failure;
  asio::co_spawn(io, into(std::move(co), out), [&](std::exception_ptr e) {
    failure = std::move(e);
    done = true;
  });
  io.restart();
  while (!done && io.run_one() > 0) {
  }
  if (failure) {
    std::rethrow_exception(failure);
  }
  return std::move(*out);
}

inline void run_co(asio::io_context& io, asio::awaitable<void> co) {
  bool done = false;
  asio::co_spawn(io, std::move(co), [&](const std::exception_ptr&) { done = true; });
  io.restart();
  while (!done && io.run_one() > 0) {
  }
}

inline std::unique_ptr<Client> make_client(asio::io_context& io, const std::string& endpoints,
                                           ClientOptions options = {}) {
  auto parsed = parse_endpoints(endpoints);
  EXPECT_TRUE(parsed) << parsed.error().message;
  options.endpoints = *parsed;
  if (options.call_timeout == k_default_call_timeout) {
    options.call_timeout = std::chrono::seconds(2);
  }
  auto client = Client::make(io, std::move(options));
  EXPECT_TRUE(client) << client.error().message;
  return client ? std::move(*client) : nullptr;
}

}  // namespace ddprun::etcd::test
