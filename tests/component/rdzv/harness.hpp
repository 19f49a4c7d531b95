#pragma once
// Runs several DynamicRendezvous instances on one io_context against one MemoryKv.

#include "ddprun/rdzv/dynamic_rendezvous.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
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

/// Runs `aw` on `ctx` to its end (bounded as run_until is) and returns its value.
template <typename T>
T run(asio::io_context& ctx, asio::awaitable<T> aw) {
  auto slot = start(ctx, std::move(aw));
  EXPECT_TRUE(run_until(ctx, [&] { return slot->has_value(); }));
  return std::move(slot->value());
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

/// The seed of the agents' random timing in these tests.
constexpr std::uint64_t k_random_seed = 20261206;

/// One io_context, one MemoryKv (with a client per agent) and the agents of a test.
class Cluster {
 public:
  Cluster() = default;
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;
  ~Cluster() {
    try {
      for (auto& a : agents_) {
        if (a) {
          a->stop();
        }
      }
      ctx_.restart();
      ctx_.poll();  // lets the stopped loops see their cancelled timers and finish
    } catch (const std::exception& e) {
      ADD_FAILURE() << "a rendezvous coroutine threw at teardown: " << e.what();
    }
  }

  /// Agent i gets node index i unless it has one, as a scheduler numbers nodes: group ranks
  /// then follow the order agents are added, not the random order they join in (rank_order.hpp).
  DynamicRendezvous& add(NodeDesc node, RdzvSettings settings) {
    if (!node.node_index) {
      node.node_index = static_cast<int>(agents_.size());
    }
    clients_.push_back(std::make_unique<MemoryKvClient>(kv_));
    agents_.push_back(DynamicRendezvous::create(ctx_, *clients_.back(), std::move(settings),
                                                std::move(node), clock_, random_));
    return *agents_.back();
  }
  /// Like a crashed agent: it stops heartbeating and never writes again.
  void kill(std::size_t i) {
    agents_.at(i)->stop();
    agents_.at(i).reset();
  }

  std::vector<Slot<Result<RoundResult>>> next_rounds(const std::vector<std::size_t>& who) {
    std::vector<Slot<Result<RoundResult>>> out;
    out.reserve(who.size());
    for (auto i : who) {
      out.push_back(start(ctx_, agents_.at(i)->next_round()));
    }
    return out;
  }
  /// next_round on `who`, all expected to succeed; returns their results.
  std::vector<RoundResult> form(const std::vector<std::size_t>& who) {
    auto slots = next_rounds(who);
    EXPECT_TRUE(run_until(ctx_, [&] { return all_done(slots); }));
    std::vector<RoundResult> out;
    for (auto& s : slots) {
      EXPECT_TRUE(s->has_value() && s->value())
          << (s->has_value() && !s->value() ? s->value().error().message : "not finished");
      if (s->has_value() && s->value()) {
        out.push_back(*s->value());
      }
    }
    return out;
  }
  Slot<RunSignal> watch(std::size_t i) { return start(ctx_, agents_.at(i)->watch()); }
  template <typename T>
  bool wait_for(const Slot<T>& slot) {
    return run_until(ctx_, [&] { return slot->has_value(); });
  }

  asio::io_context ctx_;
  MemoryKv kv_{ctx_};
  std::vector<std::unique_ptr<MemoryKvClient>> clients_;  ///< one per agent, like connections
  util::SystemClock clock_;
  util::Random random_{k_random_seed};  ///< the agents' jitter and backoff repeat run to run
  std::vector<std::shared_ptr<DynamicRendezvous>> agents_;
};

inline RoundHeader header_of(const MemoryKv& kv) {
  auto raw = kv.peek(state_key("job"));
  if (!raw) {
    return RoundHeader{};
  }
  auto h = decode_header(*raw);
  EXPECT_TRUE(h) << h.error().message;
  return h ? *h : RoundHeader{};
}

}  // namespace ddprun::rdzv::test
