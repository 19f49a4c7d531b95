#pragma once
// A single-consumer event queue for the agent's io_context: producers push (signal handler
// completions, rendezvous watchers), one coroutine pops with an optional deadline.
// The wake-up is a steady_timer that push() cancels (the Asio chat-server idiom).

#include "ddprun/net/asio.hpp"

#include <deque>
#include <optional>

namespace ddprun::agent {

template <typename Event>
class EventQueue {
 public:
  explicit EventQueue(asio::io_context& ctx) : timer_(ctx) {}

  void push(Event e) {
    events_.push_back(std::move(e));
    timer_.cancel();
  }

  std::optional<Event> try_pop() {
    if (events_.empty()) {
      return std::nullopt;
    }
    Event e = std::move(events_.front());
    events_.pop_front();
    return e;
  }

  /// Waits for the next event, or until `deadline` (nullopt when it passed first).
  asio::awaitable<std::optional<Event>> pop_until(std::chrono::steady_clock::time_point deadline) {
    while (events_.empty()) {
      if (std::chrono::steady_clock::now() >= deadline) {
        co_return std::nullopt;
      }
      timer_.expires_at(deadline);
      boost::system::error_code ec;
      co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    co_return try_pop();
  }

  asio::awaitable<Event> pop() {
    auto e = co_await pop_until(std::chrono::steady_clock::time_point::max());
    co_return std::move(*e);
  }

 private:
  asio::steady_timer timer_;
  std::deque<Event> events_;
};

}  // namespace ddprun::agent
