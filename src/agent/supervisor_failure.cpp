// The supervisor's account of a failed group for the rendezvous: which failure came first,
// its reason for messages ("rank 1 failed (exitcode: 3)") and its signature for telling a crash
// loop ("rank 1: exitcode 3: ValueError: bad value"), and whether the attempt was short of
// --crash-loop-window (it made no progress).

#include "ddprun/agent/supervisor.hpp"
#include "ddprun/errors/failure.hpp"
#include "ddprun/rdzv/crash_loop.hpp"
#include "ddprun/util/files.hpp"
#include "ddprun/util/strings.hpp"

namespace ddprun::agent {

namespace {

/// The error line in a signature (and so in the rendezvous header) is cut to this length.
constexpr std::size_t k_max_signature_line = 200;

/// The last line of `lines` with more than blanks, trimmed; "" when none.
std::string last_line(const std::vector<std::string>& lines) {
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    const auto begin = it->find_first_not_of(" \t\r");
    if (begin != std::string::npos) {
      return it->substr(begin, it->find_last_not_of(" \t\r") - begin + 1);
    }
  }
  return "";
}

}  // namespace

/// This group's failure for the rendezvous: its first worker's failure, or the stall, with
/// how it failed (to tell a crash loop) and whether the attempt was short of the window.
FailureNote Supervisor::failure_note() const {
  const bool quick = clock_.now() - round_started_ < rdzv_settings_.crash_loop_window;
  if (!failure_order_.empty()) {
    const auto& w = workers_[failure_order_.front()];
    return FailureNote{w.exit_time(), failure_reason(), failure_signature(w), quick};
  }
  if (!stall_.empty()) {
    return FailureNote{stalled_at_, "worker group stalled", "worker group stalled", quick};
  }
  return FailureNote{clock_.wall_now(), failure_reason()};  // a peer's failure: no claim here
}

/// Tells the rendezvous this group failed. While the crash-loop stop is off, returns the hint
/// naming a streak of identical quick failures it would have stopped (crash_loop.hpp).
asio::awaitable<std::optional<std::string>> Supervisor::report_group_failure() {
  const auto streak = co_await rdzv_.report_failure(failure_note());
  co_return rdzv::render_crash_loop_hint(streak, rdzv_settings_, util::wall_ms(clock_.wall_now()));
}

/// "rank 1: exitcode 1: ValueError: bad value": the rank, how it ended and its last error line.
std::string Supervisor::failure_signature(const WorkerRecord& w) const {
  const auto& e = w.exit();
  std::string s = "rank " + std::to_string(w.ranks().rank) + ": ";
  s += e.signaled ? process::signal_name(e.signal) : "exitcode " + std::to_string(e.code());
  if (const auto line = last_error_line(w.ranks().local_rank); !line.empty()) {
    s += ": " + line.substr(0, k_max_signature_line);
  }
  return s;
}

/// The last line of the worker's error file (its exception, with torch's @record), else the
/// last line it wrote to stderr when the agent reads it or it goes to a file; "" when neither.
std::string Supervisor::last_error_line(int local_rank) const {
  if (const auto path = io_.error_file(local_rank); !path.empty()) {
    if (const auto text = util::read_file(path)) {
      if (const auto record = errors::parse_error_file(*text)) {
        if (auto line = last_line(util::split(record->traceback, '\n')); !line.empty()) {
          return line;
        }
      }
    }
  }
  return last_line(io_.stderr_tail(local_rank));
}

/// "rank 1 failed (exitcode: 3)": the first failure seen.
std::string Supervisor::failure_reason() const {
  if (failure_order_.empty()) {
    return "failure";
  }
  const auto& w = workers_[failure_order_.front()];
  const auto name = w.exit().signaled ? errors::signal_name(w.exit().signal) : std::string();
  return "rank " + std::to_string(w.ranks().rank) +
         " failed (exitcode: " + std::to_string(w.exit().code()) +
         (name.empty() ? std::string() : ", " + name) + ")";
}

}  // namespace ddprun::agent
