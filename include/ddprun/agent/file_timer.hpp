#pragma once
// The pure core of torchrun's file-timer watchdog (spec torchrun.md §8.3): parsing one request
// line written by torch's FileTimerClient, and the table of armed timers. No I/O, no clock:
// the caller passes epoch seconds. It lives in the agent module, beside the supervisor that
// acts on its answers, as a pure file (like policy.cpp): too small for a module of its own,
// and the FIFO shell that feeds it (file_timer_server.hpp) needs the agent's Asio anyway.

#include "ddprun/util/result.hpp"

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ddprun::agent {

/// Set to "1" in the launcher's environment to run the watchdog.
inline constexpr std::string_view k_enable_file_timer_env = "TORCHELASTIC_ENABLE_FILE_TIMER";
/// The FIFO's path: read from the launcher's environment, exported to the workers.
inline constexpr std::string_view k_timer_file_env = "TORCHELASTIC_TIMER_FILE";
/// torch's client writes one line per request, at most PIPE_BUF bytes.
inline constexpr std::size_t k_max_timer_request_bytes = 4096;
/// Armed timers kept at once: the FIFO is writable by others, memory must stay bounded.
inline constexpr std::size_t k_max_timers = 65536;

/// One line of the protocol: {"version": 1, "pid": 42, "scope_id": "step",
/// "expiration_time": 1795946171.5, "signal": 9}. A negative expiration_time releases.
struct TimerRequest {
  int version = 1;
  pid_t pid = 0;
  std::string scope_id;
  double expiration_time = 0;  ///< epoch seconds
  int signal = 0;

  bool is_release() const { return expiration_time < 0; }
};

/// Parses one line (without its newline). Errors say what is wrong with which field.
Result<TimerRequest> parse_timer_request(std::string_view line);

/// A timer that ran out: the signal to send to `pid`, and the scope that ran out.
struct TimerExpiry {
  pid_t pid = 0;
  int signal = 0;
  std::string scope_id;
};

/// The armed timers, keyed by (pid, scope_id) like torch's FileTimerServer.
class TimerTable {
 public:
  /// Registers (or re-arms) the request's timer, or releases it. False: a new timer was
  /// refused because k_max_timers are armed.
  bool apply(const TimerRequest& request);
  /// For each pid with a timer expired at `now`: the signal of its earliest expired timer
  /// with signal > 0, and that timer's scope. Every timer of those pids is then forgotten
  /// (also when none of its expired timers had a signal to send).
  std::vector<TimerExpiry> expired(double now);
  /// Forgets every timer of `pid` (the process exited).
  void drop_pid(pid_t pid);
  /// The earliest expiration among the armed timers; nullopt when none is armed.
  std::optional<double> next_expiration() const;
  std::size_t size() const { return timers_.size(); }

 private:
  struct Armed {
    double expiration_time = 0;
    int signal = 0;
  };
  std::map<std::pair<pid_t, std::string>, Armed> timers_;
};

}  // namespace ddprun::agent
