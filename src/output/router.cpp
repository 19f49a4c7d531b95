#include "ddprun/output/router.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "console_sink.hpp"
#include "pipe_reader.hpp"

namespace ddprun::output {

struct OutputRouter::Slot {
  WorkerIdentity id;
  WorkerStdioPlan plan;
  LogPaths paths;
  ChildStdio child;
  std::vector<int> child_side;  // closed by on_spawned
  std::shared_ptr<detail::PipeReader> out;
  std::shared_ptr<detail::PipeReader> err;
  bool started = false;
};

struct OutputRouter::Waiter {
  explicit Waiter(asio::io_context& ctx) : timer(ctx) {}
  asio::steady_timer timer;
  std::function<void()> done;
};

namespace {

constexpr int k_file_mode = 0644;

Error open_error(const std::string& what, const std::string& path) {
  return make_error(ErrorCode::io, what + "(" + path + "): " + std::strerror(errno));
}

void close_all(std::vector<int>& fds) {
  for (int fd : fds) {
    ::close(fd);
  }
  fds.clear();
}

/// stdout and stderr on one file or pipe (`2>&1`): one sink writes both, so that one rank's
/// stdout line and another's stderr line never cut into each other.
bool same_file(int a, int b) {
  struct stat sa {};
  struct stat sb {};
  return ::fstat(a, &sa) == 0 && ::fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

/// The clock of a router given none.
const util::Clock& system_clock() {
  static const util::SystemClock clock;
  return clock;
}

}  // namespace

OutputRouter::OutputRouter(asio::io_context& ctx, RouterOptions options)
    : ctx_(ctx),
      options_(std::move(options)),
      console_out_(std::make_shared<detail::ConsoleSink>(ctx, options_.console_out_fd,
                                                         options_.console_buffer_bytes)),
      console_err_(same_file(options_.console_out_fd, options_.console_err_fd)
                       ? console_out_
                       : std::make_shared<detail::ConsoleSink>(ctx, options_.console_err_fd,
                                                               options_.console_buffer_bytes)),
      activity_(std::make_shared<std::chrono::steady_clock::time_point>()) {}

// Cancelling timers may throw (Asio's throwing overloads); a destructor that lets it escape
// would terminate the launcher.
OutputRouter::~OutputRouter() {
  try {
    reset();
  } catch (const std::exception& e) {
    // This module has no logger; the line still reaches the user.
    (void)std::fprintf(stderr, "ddprun: output: closing the worker streams: %s\n", e.what());
  }
}

Result<int> OutputRouter::open_stream(Slot& slot, Route route, const std::string& path,
                                      bool is_err) {
  if (route == Route::inherit) {
    return -1;
  }
  if (route == Route::devnull) {
    int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    return fd < 0 ? Result<int>(open_error("open", "/dev/null")) : Result<int>(fd);
  }
  int file_fd = -1;
  if (route == Route::file_only || route == Route::tee || route == Route::file_piped) {
    file_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, k_file_mode);
    if (path.empty() || file_fd < 0) {
      return open_error("open", path);
    }
    if (route == Route::file_only) {
      return file_fd;
    }
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    if (file_fd >= 0) {
      ::close(file_fd);
    }
    return open_error("pipe2", "local rank " + std::to_string(slot.id.local_rank));
  }
  (void)::fcntl(fds[0], F_SETPIPE_SZ, static_cast<int>(options_.pipe_buffer_bytes));
  detail::PipeReaderConfig config;
  config.file_fd = file_fd;
  config.file_path = path;
  config.notes = console_err_;
  if (route == Route::tee || route == Route::console_prefixed || route == Route::pass_through) {
    config.console = is_err ? console_err_ : console_out_;
  }
  config.raw_console = route == Route::pass_through;  // else lines get the prefix at the start
  config.activity = activity_;
  config.clock = options_.clock != nullptr ? options_.clock : &system_clock();
  config.local_rank = slot.id.local_rank;
  config.tail_lines = is_err ? options_.stderr_tail_lines : 0;
  config.max_line = options_.max_line_bytes;
  auto reader = std::make_shared<detail::PipeReader>(ctx_, fds[0], std::move(config));
  (is_err ? slot.err : slot.out) = std::move(reader);
  return fds[1];
}

Result<ChildStdio> OutputRouter::prepare(const WorkerIdentity& id, const WorkerStdioPlan& plan,
                                         const LogPaths& paths) {
  if (auto old = slots_.find(id.local_rank); old != slots_.end()) {
    close_all(old->second->child_side);
    slots_.erase(old);
  }
  auto slot = std::make_unique<Slot>();
  slot->id = id;
  slot->plan = plan;
  slot->paths = paths;
  auto out = open_stream(*slot, plan.out, paths.stdout_log, false);
  if (!out) {
    return out.error();
  }
  slot->child.out_fd = *out;
  if (*out >= 0) {
    slot->child_side.push_back(*out);
  }
  auto err = open_stream(*slot, plan.err, paths.stderr_log, true);
  if (!err) {
    close_all(slot->child_side);
    return err.error();
  }
  slot->child.err_fd = *err;
  if (*err >= 0) {
    slot->child_side.push_back(*err);
  }
  auto child = slot->child;
  slots_[id.local_rank] = std::move(slot);
  return child;
}

void OutputRouter::on_spawned(int local_rank, int pid) {
  auto it = slots_.find(local_rank);
  if (it == slots_.end() || it->second->started) {
    return;
  }
  Slot& slot = *it->second;
  close_all(slot.child_side);
  slot.started = true;
  const auto prefix =
      render_prefix(options_.prefix_template, slot.id.role, slot.id.rank, slot.id.local_rank, pid);
  for (auto* reader : {&slot.out, &slot.err}) {
    if (*reader) {
      (*reader)->start(prefix, [this] { check_drained(); });
    }
  }
}

bool OutputRouter::drained() const {
  for (const auto& [lr, slot] : slots_) {
    for (const auto* reader : {&slot->out, &slot->err}) {
      if (*reader && slot->started && !(*reader)->at_eof()) {
        return false;
      }
    }
  }
  return true;
}

void OutputRouter::async_wait_drained(std::chrono::milliseconds max_wait,
                                      std::function<void()> done) {
  auto waiter = std::make_shared<Waiter>(ctx_);
  waiter->done = std::move(done);
  waiters_.push_back(waiter);
  waiter->timer.expires_after(max_wait);
  waiter->timer.async_wait([waiter](const boost::system::error_code&) {
    if (auto fn = std::exchange(waiter->done, nullptr)) {
      fn();
    }
  });
  check_drained();
}

// Firing cancels the timer; its handler then runs the callback from the io_context, never
// from inside our own call stack.
void OutputRouter::check_drained() {
  if (!drained()) {
    return;
  }
  for (auto& waiter : waiters_) {
    waiter->timer.cancel();
  }
  waiters_.clear();
}

std::vector<std::string> OutputRouter::tail_lines(int local_rank, std::size_t n) const {
  auto it = slots_.find(local_rank);
  if (it == slots_.end()) {
    return {};
  }
  const Slot& slot = *it->second;
  if (slot.err) {
    return slot.err->tail(n);
  }
  if (slot.plan.err == Route::file_only) {
    return detail::read_file_tail_lines(slot.paths.stderr_log, n);
  }
  return {};
}

std::chrono::steady_clock::time_point OutputRouter::last_output() const { return *activity_; }

std::uint64_t OutputRouter::console_dropped_bytes(int local_rank) const {
  const bool one_sink = console_out_ == console_err_;
  return console_out_->dropped_bytes(local_rank) +
         (one_sink ? 0 : console_err_->dropped_bytes(local_rank));
}

std::size_t OutputRouter::console_buffered_bytes() const {
  const bool one_sink = console_out_ == console_err_;
  return console_out_->buffered_bytes() + (one_sink ? 0 : console_err_->buffered_bytes());
}

std::uint64_t OutputRouter::file_error_bytes(int local_rank) const {
  auto it = slots_.find(local_rank);
  if (it == slots_.end()) {
    return 0;
  }
  std::uint64_t total = 0;
  for (const auto* reader : {&it->second->out, &it->second->err}) {
    total += *reader ? (*reader)->file_error_bytes() : 0;
  }
  return total;
}

void OutputRouter::reset() {
  for (auto& [lr, slot] : slots_) {
    close_all(slot->child_side);
    for (auto* reader : {&slot->out, &slot->err}) {
      if (*reader) {
        (*reader)->stop();
      }
    }
  }
  slots_.clear();
  check_drained();
}

}  // namespace ddprun::output
