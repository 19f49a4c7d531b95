#pragma once
// A single-consumer event queue for the agent's io_context: producers push (signal handler
// completions, rendezvous watchers), one coroutine pops with an optional deadline.
// The wake-up is a steady_timer that push() cancels (the Asio chat-server idiom); deadlines
// are read on the caller's clock (the util::Clock seam), the timer only sleeps until then.

#include "ddprun/net/asio.hpp"
#include "ddprun/util/clock.hpp"

#include <deque>
#include <optional>

namespace ddprun::agent {

template <typename Event>
class EventQueue {
 public:
  EventQueue(asio::io_context& ctx, const util::Clock& clock) : timer_(ctx), clock_(clock) {}

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
  asio::awaitable<std::optional<Event>> pop_until(util::SteadyTime deadline) {
    while (events_.empty()) {
      const auto now = clock_.now();
      if (now >= deadline) {
        co_return std::nullopt;
      }
      if (deadline == util::SteadyTime::max()) {
        timer_.expires_at(util::SteadyTime::max());
      } else {
        timer_.expires_after(deadline - now);
      }
      boost::system::error_code ec;
      co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    co_return try_pop();
  }

  asio::awaitable<Event> pop() {
    auto e = co_await pop_until(util::SteadyTime::max());
    co_return std::move(*e);
  }

 private:
  asio::steady_timer timer_;
  const util::Clock& clock_;
  std::deque<Event> events_;
};

}  // namespace ddprun::agent
