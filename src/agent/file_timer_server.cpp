// The FIFO protocol, server side, as torch's FileTimerServer does it (spec §8.3):
//   start: remove whatever is at the path, mkfifo(path, 0600), open it O_RDONLY|O_NONBLOCK,
//          then open one writer of our own: with it the FIFO never reports EOF between two
//          clients (each opens, writes one line of at most PIPE_BUF bytes and closes), so the
//          reader waits in epoll instead of spinning.
//   read:  asio::posix::stream_descriptor on the agent's io_context; bytes are cut into lines,
//          each parsed by parse_timer_request() and applied to the TimerTable.
//   wake:  one steady_timer set to the earliest expiration (re-armed after every request), so
//          there is no 0.1 s polling; the wait is capped so a wall-clock step is noticed.
//   stop:  close both ends, unlink the FIFO, drop every timer. A Channel is one start..stop;
//          the coroutines hold it, so a late completion after stop() touches only its own
//          closed channel.

#include "ddprun/agent/file_timer_server.hpp"

#include "ddprun/util/strings.hpp"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <random>

namespace ddprun::agent {

namespace {

/// Longest single wait: a wall-clock step (NTP) is then noticed within this bound.
constexpr std::chrono::seconds k_max_sleep{30};
/// Malformed lines logged at WARNING per group; later ones go to DEBUG.
constexpr int k_malformed_warnings = 3;

double epoch_seconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

std::string errno_text(const char* call, const std::string& path) {
  return std::string(call) + "(" + path + "): " + std::strerror(errno);
}

}  // namespace

struct FileTimerServer::Channel {
  explicit Channel(asio::io_context& ctx) : fifo(ctx), wake(ctx) {}
  std::string path;
  asio::posix::stream_descriptor fifo;
  int own_writer = -1;
  asio::steady_timer wake;
  TimerTable table;
  std::string partial;    // bytes after the last newline
  bool skipping = false;  // inside an over-long line, dropped up to its newline
  bool stopped = false;
  int malformed = 0;
  std::function<void(TimerExpiry)> on_expired;
};

FileTimerServer::FileTimerServer(asio::io_context& ctx, const util::Clock& clock, std::string path,
                                 std::string temp_dir)
    : ctx_(ctx), clock_(clock), path_(std::move(path)), temp_dir_(std::move(temp_dir)) {}

FileTimerServer::~FileTimerServer() {
  try {
    stop();
  } catch (...) {
    // Closing the FIFO's descriptors throws only on an OS error; nothing is left to undo then.
  }
}

std::string FileTimerServer::next_path() const {
  if (!path_.empty()) {
    return path_;
  }
  std::random_device rd;
  std::uniform_int_distribution<unsigned> hex(0, 15);
  std::string id;
  for (int i = 0; i < 32; ++i) {
    id += "0123456789abcdef"[hex(rd)];
  }
  return temp_dir_ + "/watchdog_timer_" + id;
}

Result<std::string> FileTimerServer::start(std::function<void(TimerExpiry)> on_expired) {
  stop();
  auto ch = std::make_shared<Channel>(ctx_);
  ch->path = next_path();
  ch->on_expired = std::move(on_expired);
  if (::unlink(ch->path.c_str()) != 0 && errno != ENOENT) {
    return make_error(ErrorCode::io, "file-timer watchdog: " + errno_text("unlink", ch->path));
  }
  if (::mkfifo(ch->path.c_str(), 0600) != 0) {
    return make_error(ErrorCode::io, "file-timer watchdog: " + errno_text("mkfifo", ch->path));
  }
  int reader = ::open(ch->path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (reader < 0) {
    auto error = errno_text("open", ch->path);
    ::unlink(ch->path.c_str());
    return make_error(ErrorCode::io, "file-timer watchdog: " + error);
  }
  ch->fifo.assign(reader);
  ch->own_writer = ::open(ch->path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (ch->own_writer < 0) {
    auto error = errno_text("open", ch->path);
    ::unlink(ch->path.c_str());
    return make_error(ErrorCode::io, "file-timer watchdog: " + error);
  }
  channel_ = ch;
  asio::co_spawn(ctx_, read_loop(ch), asio::detached);
  asio::co_spawn(ctx_, expiry_loop(ch), asio::detached);
  spdlog::info("file-timer watchdog listening on {}", ch->path);
  return ch->path;
}

void FileTimerServer::forget(pid_t pid) {
  if (channel_) {
    channel_->table.drop_pid(pid);
  }
}

void FileTimerServer::stop() {
  if (!channel_) {
    return;
  }
  auto ch = std::exchange(channel_, nullptr);
  ch->stopped = true;
  boost::system::error_code ignored;
  ch->fifo.close(ignored);
  if (ch->own_writer >= 0) {
    ::close(ch->own_writer);
  }
  ch->wake.cancel();
  ch->table = TimerTable{};
  ::unlink(ch->path.c_str());
}

asio::awaitable<void> FileTimerServer::read_loop(std::shared_ptr<Channel> ch) {
  std::array<char, 4096> buf{};
  while (!ch->stopped) {
    boost::system::error_code ec;
    std::size_t n = co_await ch->fifo.async_read_some(
        asio::buffer(buf), asio::redirect_error(asio::use_awaitable, ec));
    if (ch->stopped) {
      co_return;
    }
    if (ec) {
      spdlog::warn("file-timer watchdog: reading {}: {}; timers stop", ch->path, ec.message());
      co_return;
    }
    std::string_view data(buf.data(), n);
    for (auto nl = data.find('\n'); nl != std::string_view::npos; nl = data.find('\n')) {
      if (!ch->skipping) {
        ch->partial.append(data.substr(0, nl));
        handle_line(*ch, ch->partial);
      }
      ch->partial.clear();
      ch->skipping = false;
      data.remove_prefix(nl + 1);
    }
    if (!ch->skipping) {
      ch->partial.append(data);
    }
    if (ch->partial.size() > k_max_timer_request_bytes) {
      handle_line(*ch, ch->partial);  // rejected for its length, logged
      ch->partial.clear();
      ch->skipping = true;
    }
    ch->wake.cancel();  // re-arm at the (maybe) new earliest expiration
  }
}

void FileTimerServer::handle_line(Channel& ch, std::string_view line) {
  if (line.empty()) {
    return;
  }
  auto request = parse_timer_request(line);
  if (!request) {
    auto level =
        ++ch.malformed <= k_malformed_warnings ? spdlog::level::warn : spdlog::level::debug;
    spdlog::log(level, "{} ignored: {}", request.error().message, line.substr(0, 200));
    return;
  }
  if (!ch.table.apply(*request)) {
    spdlog::warn("file-timer request ignored: {} timers are armed already (pid {}, scope {})",
                 k_max_timers, request->pid, util::quoted(request->scope_id));
  }
  last_request_ = clock_.now();
}

asio::awaitable<void> FileTimerServer::expiry_loop(std::shared_ptr<Channel> ch) {
  while (!ch->stopped) {
    for (auto& expiry : ch->table.expired(epoch_seconds(clock_.wall_now()))) {
      ch->on_expired(std::move(expiry));
      if (ch->stopped) {
        co_return;
      }
    }
    auto wait = std::chrono::duration<double>(k_max_sleep);
    if (auto next = ch->table.next_expiration()) {
      auto left = std::chrono::duration<double>(*next - epoch_seconds(clock_.wall_now()));
      wait = std::clamp(left, std::chrono::duration<double>(0), wait);
    }
    ch->wake.expires_after(std::chrono::duration_cast<std::chrono::milliseconds>(wait) +
                           std::chrono::milliseconds(1));
    boost::system::error_code ec;
    co_await ch->wake.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

std::unique_ptr<FileTimerServer> make_file_timer_server(asio::io_context& ctx,
                                                        const util::Clock& clock,
                                                        const util::Env& env) {
  auto enabled = env.get(k_enable_file_timer_env).value_or("");
  if (enabled != "1") {
    if (!enabled.empty() && enabled != "0") {
      spdlog::warn("{}={} is not 1: the file-timer watchdog stays off (as with torchrun)",
                   k_enable_file_timer_env, util::quoted(enabled));
    }
    return nullptr;
  }
  auto path = env.get_nonempty(k_timer_file_env).value_or("");
  auto temp_dir = env.get_nonempty("TMPDIR").value_or("/tmp");
  return std::make_unique<FileTimerServer>(ctx, clock, std::move(path), std::move(temp_dir));
}

}  // namespace ddprun::agent
