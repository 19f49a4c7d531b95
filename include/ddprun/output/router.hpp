#pragma once
// OutputRouter: the I/O shell that plumbs worker stdout/stderr according to a
// WorkerStdioPlan, on the agent's single-threaded io_context (no threads, no locks).
//
// Per worker: prepare() opens what the child needs and returns the fds the launcher
// dup2()s onto the child's 1 and 2 (-1 = inherit the agent's). After fork the agent calls
// on_spawned() (also when the spawn failed), which closes the child-side fds here and
// starts reading the pipes. Routes that need no agent work (inherit, file_only, devnull)
// cost nothing at runtime. Piped streams never block the loop or the worker: the file copy
// is written as it arrives, and the console copy goes through a bounded buffer that drops
// (and counts, and later reports) what a slow console cannot take.
//
// The process must ignore SIGPIPE (a console whose reader went away would kill it);
// the launcher must restore SIGPIPE to SIG_DFL in the child before exec.

#include "ddprun/net/asio.hpp"
#include "ddprun/output/line_splitter.hpp"
#include "ddprun/output/log_dir.hpp"
#include "ddprun/output/stdio_plan.hpp"
#include "ddprun/util/clock.hpp"
#include "ddprun/util/result.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ddprun::output {

namespace detail {
class ConsoleSink;
class PipeReader;
}  // namespace detail

struct WorkerIdentity {
  std::string role;
  int rank = 0;
  int local_rank = 0;
};

/// fds for the child's stdout/stderr; -1 means inherit. Owned by the router (O_CLOEXEC).
struct ChildStdio {
  int out_fd = -1;
  int err_fd = -1;
};

struct RouterOptions {
  int console_out_fd = STDOUT_FILENO;  ///< tests pass pipes or files here
  int console_err_fd = STDERR_FILENO;
  std::string prefix_template = std::string(k_default_prefix_template);
  std::size_t console_buffer_bytes = 1024 * 1024;  ///< per console stream
  std::size_t max_line_bytes = k_max_line_bytes;
  std::size_t stderr_tail_lines = 20;
  std::size_t pipe_buffer_bytes = 1024 * 1024;  ///< F_SETPIPE_SZ request, best effort
  /// Stamps last_output(); null: the system clock. It must outlive the router.
  const util::Clock* clock = nullptr;
};

class OutputRouter {
 public:
  explicit OutputRouter(asio::io_context& ctx, RouterOptions options = {});
  ~OutputRouter();
  OutputRouter(const OutputRouter&) = delete;
  OutputRouter& operator=(const OutputRouter&) = delete;

  /// Opens files, /dev/null or pipes for one worker. Errors name the path and errno.
  Result<ChildStdio> prepare(const WorkerIdentity& id, const WorkerStdioPlan& plan,
                             const LogPaths& paths);
  /// Closes the child-side fds and starts reading this worker's pipes, their lines prefixed
  /// with the template rendered for the worker's `pid` (0: the spawn failed).
  void on_spawned(int local_rank, int pid = 0);
  /// Posts `done` once every started pipe reached EOF (partial last lines flushed), or
  /// when max_wait expires (a grandchild may hold a pipe open), whichever comes first.
  void async_wait_drained(std::chrono::milliseconds max_wait, std::function<void()> done);
  bool drained() const;
  /// The last n stderr lines: kept in memory for piped stderr, read back from stderr.log
  /// for file_only stderr; empty for inherited or /dev/null stderr.
  std::vector<std::string> tail_lines(int local_rank, std::size_t n) const;
  /// When a worker last wrote anything to a stream the agent reads (any rank, any attempt);
  /// the epoch when none did yet.
  std::chrono::steady_clock::time_point last_output() const;
  /// Console bytes dropped for this rank since the router was made (all attempts).
  std::uint64_t console_dropped_bytes(int local_rank) const;
  /// Worker output queued for the console but not written yet (both streams).
  std::size_t console_buffered_bytes() const;
  /// Log-file bytes that could not be written (ENOSPC...) in the current attempt.
  std::uint64_t file_error_bytes(int local_rank) const;
  /// Between attempts: stops every reader and forgets all workers. Bytes already in the
  /// pipes and partial last lines are still written by handlers on the io_context, so run
  /// it (briefly) after reset() to get them out.
  void reset();

 private:
  struct Slot;
  struct Waiter;
  Result<int> open_stream(Slot& slot, Route route, const std::string& path, bool is_err);
  void check_drained();

  asio::io_context& ctx_;
  RouterOptions options_;
  std::shared_ptr<detail::ConsoleSink> console_out_;
  std::shared_ptr<detail::ConsoleSink> console_err_;
  std::map<int, std::unique_ptr<Slot>> slots_;
  std::vector<std::shared_ptr<Waiter>> waiters_;
  std::shared_ptr<std::chrono::steady_clock::time_point> activity_;
};

}  // namespace ddprun::output
