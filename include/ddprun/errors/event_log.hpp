#pragma once
// --events-file: one JSON object per line for every lifecycle event, flushed per line
// (a single write(2) on an O_APPEND fd, so a concurrent tail never sees half a line).
//   {"ts": 1795946171.25, "event": "worker_exit", "local_rank": 1, ...}

#include "ddprun/util/clock.hpp"
#include "ddprun/util/result.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::errors {

/// Event names written by the agent.
namespace event {
inline constexpr std::string_view rendezvous = "rendezvous";
inline constexpr std::string_view workers_started = "workers_started";
inline constexpr std::string_view worker_exit = "worker_exit";
inline constexpr std::string_view watchdog_expired = "watchdog_expired";
inline constexpr std::string_view restart = "restart";
inline constexpr std::string_view stop = "stop";
inline constexpr std::string_view result = "result";
inline constexpr std::string_view stacks = "stacks";
inline constexpr std::string_view stall = "stall";
/// --stall-timeout auto: the learned timeout changed (`timeout_s`, `basis`: how it came about).
inline constexpr std::string_view stall_timeout = "stall_timeout";
inline constexpr std::string_view excluded = "excluded";
inline constexpr std::string_view crash_loop = "crash_loop";
inline constexpr std::string_view unhealthy = "unhealthy";
/// A spare joined a round in place of members of the round it waited for (`replaced`).
inline constexpr std::string_view spare_joined = "spare_joined";
}  // namespace event

using EventFields = nlohmann::ordered_json;

/// One line (with '\n'): "ts" and "event" first, then `fields` (an object) in order.
std::string render_event(double ts, std::string_view name, const EventFields& fields);

/// Appends events to a file. Movable, not copyable. Write failures never throw: they are
/// counted (write_errors()) so the agent can report them once.
class EventLog {
 public:
  /// Opens (creates, appends to) `path`; an error names the path and errno text.
  static Result<EventLog> open(const std::string& path, const util::Clock& clock);
  EventLog(EventLog&& other) noexcept;
  EventLog& operator=(EventLog&& other) noexcept;
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;
  ~EventLog();

  void emit(std::string_view name, const EventFields& fields);

  void rendezvous(std::int64_t round, int group_rank, int group_world_size);
  void workers_started(std::int64_t attempt, const std::vector<int>& pids);
  void worker_exit(int local_rank, int rank, int pid, int exit_code);
  void watchdog_expired(int local_rank, int rank, int pid, std::string_view scope_id, int signal);
  void restart(std::int64_t attempt, int restarts_left, std::string_view reason);
  void stop(std::string_view reason);
  void result(std::string_view state, int exit_code);

  std::uint64_t write_errors() const { return write_errors_; }

 private:
  EventLog(int fd, const util::Clock& clock) : fd_(fd), clock_(&clock) {}
  int fd_ = -1;
  const util::Clock* clock_;
  std::uint64_t write_errors_ = 0;
};

}  // namespace ddprun::errors
