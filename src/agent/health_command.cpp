#include "ddprun/agent/health_command.hpp"

#include "ddprun/output/line_splitter.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <deque>
#include <utility>

namespace ddprun::agent {

namespace {

constexpr std::size_t k_kept_lines = 4 * k_health_tail_lines;  // blank ones are dropped later
constexpr std::size_t k_line_bytes = 300;                      // a reason is one short line

std::string cut(std::string_view line) {
  if (!line.empty() && line.back() == '\r') {
    line.remove_suffix(1);
  }
  return line.size() <= k_line_bytes ? std::string(line)
                                     : std::string(line.substr(0, k_line_bytes)) + "...";
}

}  // namespace

/// The read side of the check's stdout+stderr pipe, shared with its reading coroutine.
struct HealthCommand::Output {
  Output(asio::io_context& ctx, int fd) : pipe(ctx, fd), eof_timer(ctx) {}
  asio::posix::stream_descriptor pipe;
  asio::steady_timer eof_timer;  ///< finish() waits on it; the reader cancels it at EOF
  output::LineSplitter splitter{k_line_bytes * 4};
  std::deque<std::string> tail;
  bool eof = false;

  void keep(std::string_view line) {
    tail.push_back(cut(line));
    if (tail.size() > k_kept_lines) {
      tail.pop_front();
    }
  }
};

HealthCommand::HealthCommand(asio::io_context& ctx, process::Launcher& launcher,
                             const util::Clock& clock, std::string command,
                             std::chrono::milliseconds timeout, std::vector<std::string> env)
    : ctx_(ctx),
      launcher_(launcher),
      clock_(clock),
      command_(std::move(command)),
      timeout_(timeout),
      env_(std::move(env)) {}

HealthCommand::~HealthCommand() {
  if (last_pgid_ > 1 && launcher_.group_alive(last_pgid_)) {
    launcher_.signal_group(last_pgid_, SIGKILL);  // the agent ends: no check outlives it
  }
  if (output_) {
    boost::system::error_code ec;
    output_->pipe.close(ec);
  }
}

Result<void> HealthCommand::start() {
  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) {
    return make_error(ErrorCode::io, std::string("pipe2: ") + std::strerror(errno));
  }
  process::SpawnRequest req{{"/bin/sh", "-c", command_}, env_, "", fds[1], fds[1], {}};
  auto pid = launcher_.spawn(req);
  ::close(fds[1]);
  if (!pid) {
    ::close(fds[0]);
    return pid.error();
  }
  pid_ = *pid;
  last_pgid_ = *pid;
  deadline_ = clock_.now() + timeout_;
  output_ = std::make_shared<Output>(ctx_, fds[0]);
  asio::co_spawn(ctx_, read_output(output_), asio::detached);
  return {};
}

util::SteadyTime HealthCommand::deadline() const {
  return pid_ != 0 ? deadline_ : util::SteadyTime::max();
}

asio::awaitable<HealthVerdict> HealthCommand::exited(int status) {
  co_return co_await finish(CheckEnd::exited_with(process::decode_wait_status(status)));
}

asio::awaitable<HealthVerdict> HealthCommand::time_out() {
  kill();
  co_return co_await finish(CheckEnd::timed_out_after(timeout_));
}

asio::awaitable<HealthVerdict> HealthCommand::finish(CheckEnd end) {
  auto out = output_;
  if (!out->eof) {
    out->eof_timer.expires_after(k_output_bound);
    boost::system::error_code ec;
    co_await out->eof_timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  boost::system::error_code ec;
  out->pipe.close(ec);
  kill();  // what the check left running in its group goes with it
  pid_ = 0;
  deadline_ = util::SteadyTime::max();
  co_return judge_health_check(end, std::vector<std::string>(out->tail.begin(), out->tail.end()));
}

void HealthCommand::kill() {
  if (last_pgid_ > 1 && launcher_.group_alive(last_pgid_)) {
    launcher_.signal_group(last_pgid_, SIGKILL);
  }
}

bool HealthCommand::group_alive() const {
  return last_pgid_ > 1 && launcher_.group_alive(last_pgid_);
}

void HealthCommand::forget() {
  if (last_pgid_ > 1) {
    launcher_.forget_group(last_pgid_);
  }
  last_pgid_ = 0;
  pid_ = 0;
  deadline_ = util::SteadyTime::max();
}

asio::awaitable<void> HealthCommand::read_output(std::shared_ptr<Output> out) {
  std::array<char, 4096> buffer{};
  const auto keep = [&out](std::string_view line) { out->keep(line); };
  while (true) {
    boost::system::error_code ec;
    const std::size_t n = co_await out->pipe.async_read_some(
        asio::buffer(buffer), asio::redirect_error(asio::use_awaitable, ec));
    if (n > 0) {
      out->splitter.feed(std::string_view(buffer.data(), n), keep);
    }
    if (ec) {
      break;
    }
  }
  out->splitter.finish(keep);
  out->eof = true;
  out->eof_timer.cancel();
}

}  // namespace ddprun::agent
