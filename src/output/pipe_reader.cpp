#include "pipe_reader.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

namespace ddprun::output::detail {
namespace {

// Tail lines are for a summary box: long lines are cut.
constexpr std::size_t k_tail_line_bytes = 300;
constexpr std::streamoff k_tail_read_bytes = 64 * 1024;

std::string cut(std::string_view line) {
  if (line.size() <= k_tail_line_bytes) {
    return std::string(line);
  }
  return std::string(line.substr(0, k_tail_line_bytes)) + "...";
}

}  // namespace

PipeReader::PipeReader(asio::io_context& ctx, int read_fd, PipeReaderConfig config)
    : pipe_(ctx, read_fd),
      config_(std::move(config)),
      buffer_(config_.read_chunk),
      splitter_(config_.max_line),
      hold_timer_(ctx),
      coalesce_timer_(ctx) {}

PipeReader::~PipeReader() {
  if (released_fd_ >= 0) {
    ::close(released_fd_);
  }
  if (config_.file_fd >= 0) {
    ::close(config_.file_fd);
  }
}

void PipeReader::start(std::string prefix, std::function<void()> on_eof) {
  prefix_ = std::move(prefix);
  on_eof_ = std::move(on_eof);
  started_ = true;
  read_some();
}

void PipeReader::read_some() {
  auto self = shared_from_this();
  pipe_.async_read_some(asio::buffer(buffer_), [self](const boost::system::error_code& ec,
                                                      std::size_t n) { self->after_read(ec, n); });
}

void PipeReader::after_read(const boost::system::error_code& ec, std::size_t n) {
  if (n > 0) {
    on_data(std::string_view(buffer_.data(), n));
  }
  if (eof_) {
    return;
  }
  if (stopping_) {
    drain_ready();
    finish();
    return;
  }
  if (ec) {
    finish();  // EOF, or an error that ends the stream
    return;
  }
  if (config_.raw_console && config_.console->full()) {
    pause();
    return;
  }
  if (n < config_.small_read && config_.coalesce.count() > 0) {
    delay_read();
    return;
  }
  read_some();
}

// A worker printing line by line makes every read small: waiting a moment lets the pipe
// gather many lines for one read (and saves the worker a wake-up of the agent per write).
// The pipe leaves the reactor meanwhile: registered, every write of the worker would still
// wake the agent.
void PipeReader::delay_read() {
  paused_ = true;
  released_fd_ = pipe_.release();
  std::weak_ptr<PipeReader> weak = shared_from_this();
  coalesce_timer_.expires_after(config_.coalesce);
  coalesce_timer_.async_wait([weak](const boost::system::error_code&) {
    if (auto self = weak.lock()) {
      self->resume();
    }
  });
}

void PipeReader::pause() {
  paused_ = true;
  std::weak_ptr<PipeReader> weak = shared_from_this();
  config_.console->when_room([weak] {
    if (auto self = weak.lock()) {
      self->resume();
    }
  });
}

void PipeReader::resume() {
  if (!paused_ || eof_) {
    return;
  }
  paused_ = false;
  reattach();
  read_some();
}

void PipeReader::reattach() {
  if (released_fd_ >= 0) {
    pipe_.assign(std::exchange(released_fd_, -1));
  }
}

void PipeReader::on_data(std::string_view data) {
  if (config_.activity && config_.clock != nullptr && !data.empty()) {
    *config_.activity = config_.clock->now();
  }
  write_file(data);
  if (config_.console && config_.raw_console) {
    to_console_raw(data);
  }
  if (!config_.console && config_.tail_lines == 0) {
    return;
  }
  splitter_.feed(data, [this](std::string_view line) { on_line(line); });
  if (config_.console) {
    config_.console->flush();
  }
}

void PipeReader::to_console_raw(std::string_view data) {
  const auto end = data.find_last_of("\r\n");
  if (end == std::string_view::npos) {
    held_.append(data);
  } else {
    held_.append(data.substr(0, end + 1));
    config_.console->append_bytes(held_);
    held_.assign(data.substr(end + 1));
  }
  if (held_.size() >= config_.max_line) {
    flush_held();
  } else if (!held_.empty()) {
    if (end != std::string_view::npos || held_.size() == data.size()) {
      held_since_ = std::chrono::steady_clock::now();  // a new partial line began
    }
    arm_hold(config_.raw_hold);
  }
}

// One timer for the partial line, armed once (re-arming per read costs a cancel and a handler
// for every print of an unbuffered worker, the text and its newline being two writes).
void PipeReader::arm_hold(std::chrono::steady_clock::duration after) {
  if (hold_armed_) {
    return;
  }
  hold_armed_ = true;
  hold_timer_.expires_after(after);
  hold_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    self->hold_armed_ = false;
    if (ec || self->held_.empty()) {
      return;
    }
    auto due = self->held_since_ + self->config_.raw_hold;
    if (auto now = std::chrono::steady_clock::now(); now < due) {
      self->arm_hold(due - now);
    } else {
      self->flush_held();
    }
  });
}

void PipeReader::flush_held() {
  if (!held_.empty() && config_.console) {
    config_.console->append_bytes(held_);
    held_.clear();
    config_.console->flush();
  }
}

void PipeReader::on_line(std::string_view line) {
  if (config_.console && !config_.raw_console) {
    config_.console->append_line(prefix_, line, config_.local_rank);
  }
  if (config_.tail_lines > 0) {
    tail_.push_back(cut(line));
    if (tail_.size() > config_.tail_lines) {
      tail_.pop_front();
    }
  }
}

void PipeReader::write_file(std::string_view data) {
  while (config_.file_fd >= 0 && !data.empty()) {
    auto n = ::write(config_.file_fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      file_errno_ = n < 0 ? errno : EIO;
      file_errors_ += data.size();  // ENOSPC, EIO...: counted, reading goes on
      return;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

void PipeReader::finish() {
  if (eof_) {
    return;
  }
  eof_ = true;
  splitter_.finish([this](std::string_view line) { on_line(line); });
  hold_timer_.cancel();
  coalesce_timer_.cancel();
  flush_held();
  if (config_.console) {
    config_.console->flush();
  }
  boost::system::error_code ignored;
  pipe_.close(ignored);
  if (config_.file_fd >= 0) {
    ::close(config_.file_fd);
    config_.file_fd = -1;
  }
  report_file_errors();
  if (auto done = std::exchange(on_eof_, nullptr)) {
    done();
  }
}

// Takes what the worker already wrote into the pipe, so that stopping loses nothing
// that was written before it.
void PipeReader::drain_ready() {
  boost::system::error_code ec;
  pipe_.non_blocking(true, ec);
  while (!ec && !eof_) {
    auto n = pipe_.read_some(asio::buffer(buffer_), ec);
    on_data(std::string_view(buffer_.data(), n));
  }
}

void PipeReader::report_file_errors() {
  if (file_errors_ == 0 || !config_.notes) {
    return;
  }
  config_.notes->append_line("",
                             "[ddprun] could not write " + std::to_string(file_errors_) +
                                 " bytes to " + config_.file_path + " (" +
                                 std::strerror(file_errno_) + ")",
                             config_.local_rank);
  config_.notes->flush();
}

// A read may have completed already with its handler still queued, so the last bytes are
// taken by that handler (in stream order), which then drains the pipe and finishes.
void PipeReader::stop() {
  on_eof_ = nullptr;
  if (eof_) {
    return;
  }
  if (!started_) {
    finish();
    return;
  }
  stopping_ = true;
  if (paused_) {  // no read pending: take what is left now
    paused_ = false;
    reattach();
    drain_ready();
    finish();
    return;
  }
  boost::system::error_code ignored;
  pipe_.cancel(ignored);
}

std::vector<std::string> PipeReader::tail(std::size_t n) const {
  auto first = tail_.size() > n ? tail_.end() - static_cast<std::ptrdiff_t>(n) : tail_.begin();
  return {first, tail_.end()};
}

std::vector<std::string> read_file_tail_lines(const std::string& path, std::size_t n) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in || n == 0) {
    return {};
  }
  auto size = static_cast<std::streamoff>(in.tellg());
  auto start = size > k_tail_read_bytes ? size - k_tail_read_bytes : 0;
  in.seekg(start);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::deque<std::string> lines;
  LineSplitter splitter;
  auto keep = [&](std::string_view line) {
    lines.push_back(cut(line));
    if (lines.size() > n) {
      lines.pop_front();
    }
  };
  splitter.feed(text, keep);
  splitter.finish(keep);
  return {lines.begin(), lines.end()};
}

}  // namespace ddprun::output::detail
