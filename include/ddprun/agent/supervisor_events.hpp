#pragma once
// What wakes the supervisor: one alternative per producer (supervisor.cpp names them), queued
// on one EventQueue and handled with std::visit, so an event carries only its own fields.

#include "ddprun/agent/event_queue.hpp"
#include "ddprun/agent/seams.hpp"
#include "ddprun/util/overloaded.hpp"

#include <sys/types.h>

#include <memory>
#include <string>
#include <variant>

namespace ddprun::agent {

/// A child was reaped (a worker, the health check, or an orphan adopted from a worker's tree).
struct ChildExited {
  pid_t pid = 0;
  int status = 0;  ///< the wait status
};

/// A handled signal reached the agent (--signals-to-handle).
struct AgentSignal {
  int signal = 0;
};

/// The rendezvous says the round must end, or a peer asks for this node's stacks.
struct RdzvNews {
  RdzvSignal signal = RdzvSignal::none;
};

/// The join started by next_round() came back.
struct RoundReady {
  std::shared_ptr<Result<Round>> round;
};

/// A rendezvous step spawned to run beside the event loop (leave, withdraw, close) is done.
struct Left {};

/// A worker's file timer ran out (the Watchdog seam).
struct TimerExpired {
  pid_t pid = 0;
  int signal = 0;
  std::string scope;  ///< the timer's scope_id
};

using Event = std::variant<ChildExited, AgentSignal, RdzvNews, RoundReady, Left, TimerExpired>;
using Events = EventQueue<Event>;

}  // namespace ddprun::agent
