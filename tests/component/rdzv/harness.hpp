#pragma once
// Runs several DynamicRendezvous instances on one io_context against one MemoryKv.

#include "ddprun/rdzv/handler.hpp"

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ddprun::rdzv::test {

using namespace std::chrono_literals;

/// Upper bound for any single wait in these tests; never reached when the code is right.
constexpr auto k_test_deadline = std::chrono::seconds(20);

/// Fast settings: real timeouts scaled down, dead after 5 missed 100 ms beats.
inline RdzvSettings fast_settings(int min_nodes, int max_nodes) {
  RdzvSettings s;
  s.run_id = "job";
  s.min_nodes = min_nodes;
  s.max_nodes = max_nodes;
  s.join_timeout = 10s;
  s.last_call_timeout = 300ms;
  s.close_timeout = 2s;
  s.keep_alive_interval = 100ms;
  s.keep_alive_max_attempt = 5;
  s.read_timeout = 5s;
  s.poll_interval = 20ms;
  s.watch_interval = 30ms;
  s.first_round_jitter = 20ms;
  s.progress_interval = 200ms;
  return s;
}

inline NodeDesc make_node(const std::string& addr, int nproc = 1) {
  NodeDesc n;
  n.addr = addr;
  n.pid = 4242;
  n.nproc = nproc;
  return n;
}

template <typename T>
using Slot = std::shared_ptr<std::optional<T>>;

template <typename T>
asio::awaitable<void> store_into(asio::awaitable<T> aw, Slot<T> out) {
  out->emplace(co_await std::move(aw));
}

/// Starts `aw` on `ctx`; the returned slot is filled when it finishes. Exceptions escape run.
template <typename T>
Slot<T> start(asio::io_context& ctx, asio::awaitable<T> aw) {
  auto slot = std::make_shared<std::optional<T>>();
  asio::co_spawn(ctx, store_into(std::move(aw), slot), [](const std::exception_ptr& e) {
    if (e) {
      std::rethrow_exception(e);
    }
  });
  return slot;
}

/// Runs `ctx` until `done()` holds or `limit` passes; returns whether it holds.
inline bool run_until(asio::io_context& ctx, const std::function<bool()>& done,
                      std::chrono::milliseconds limit = k_test_deadline) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return false;
    }
    if (ctx.stopped()) {
      ctx.restart();  // it ran out of work earlier; new work may have been started since
    }
    ctx.run_one_for(10ms);
  }
  return true;
}

template <typename T>
bool all_done(const std::vector<Slot<T>>& slots) {
  for (const auto& s : slots) {
    if (!s->has_value()) {
      return false;
    }
  }
  return true;
}

}  // namespace ddprun::rdzv::test
