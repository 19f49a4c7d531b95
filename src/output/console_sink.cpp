#include "console_sink.hpp"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace ddprun::output::detail {
namespace {

constexpr std::string_view k_note_head = "[ddprun] dropped ";

bool never_blocks(const struct stat& st, int fd) {
  return S_ISREG(st.st_mode) || S_ISBLK(st.st_mode) || (S_ISCHR(st.st_mode) && isatty(fd) == 0);
}

}  // namespace

ConsoleSink::ConsoleSink(asio::io_context& ctx, int fd, std::size_t capacity)
    : capacity_(capacity), executor_(ctx.get_executor()) {
  open_private(fd);
  if (mode_ != Mode::direct && fd_ >= 0) {
    watcher_.emplace(ctx, ::fcntl(fd_, F_DUPFD_CLOEXEC, 0));
  }
}

ConsoleSink::~ConsoleSink() {
  if (watcher_) {
    boost::system::error_code ignored;
    watcher_->close(ignored);
  }
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

void ConsoleSink::open_private(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || never_blocks(st, fd)) {
    mode_ = Mode::direct;
    fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    return;
  }
  if (S_ISSOCK(st.st_mode)) {
    mode_ = Mode::socket;
    fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    return;
  }
  auto path = "/proc/self/fd/" + std::to_string(fd);
  fd_ = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  mode_ = Mode::nonblocking;
  if (fd_ < 0) {
    mode_ = Mode::guarded;
    fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  }
}

bool ConsoleSink::make_room(std::size_t size, int local_rank) {
  if (broken_ || buffered_bytes() + size > capacity_) {
    dropped_[local_rank] += size;
    unreported_[local_rank] += size;
    return false;
  }
  compact();
  return true;
}

void ConsoleSink::compact() {
  if (head_ > 0 && head_ >= buffer_.size() / 2) {
    buffer_.erase(0, head_);
    head_ = 0;
  }
}

void ConsoleSink::append_line(std::string_view prefix, std::string_view line, int local_rank) {
  if (!make_room(prefix.size() + line.size() + 1, local_rank)) {
    return;
  }
  buffer_.append(prefix);
  buffer_.append(line);
  buffer_.push_back('\n');
}

void ConsoleSink::append_bytes(std::string_view bytes) {
  if (!broken_) {
    compact();  // unbounded here: the reader stops reading while full()
    buffer_.append(bytes);
  }
}

void ConsoleSink::when_room(std::function<void()> ready) {
  room_waiters_.push_back(std::move(ready));
  wake_waiters();
}

void ConsoleSink::wake_waiters() {
  if (room_waiters_.empty() || (!broken_ && buffered_bytes() > capacity_ / 2)) {
    return;
  }
  for (auto& ready : std::exchange(room_waiters_, {})) {
    asio::post(executor_, std::move(ready));
  }
}

long ConsoleSink::write_some(std::string_view data) {
  switch (mode_) {
    case Mode::socket:
      return ::send(fd_, data.data(), data.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    case Mode::guarded: {
      struct pollfd p {
        fd_, POLLOUT, 0
      };
      if (::poll(&p, 1, 0) != 1 || (p.revents & POLLOUT) == 0) {
        errno = EAGAIN;
        return -1;
      }
      return ::write(fd_, data.data(), std::min<std::size_t>(data.size(), PIPE_BUF));
    }
    case Mode::direct:
    case Mode::nonblocking:
      break;
  }
  return ::write(fd_, data.data(), data.size());
}

void ConsoleSink::flush() {
  while (!waiting_ && !broken_) {
    if (buffered_bytes() == 0) {
      queue_notes();
      if (buffered_bytes() == 0) {
        return;
      }
    }
    auto n = write_some(std::string_view(buffer_).substr(head_));
    if (n > 0) {
      head_ += static_cast<std::size_t>(n);
      wake_waiters();
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      wait_writable();
    } else {
      lose_buffer();
    }
  }
}

void ConsoleSink::wait_writable() {
  if (!watcher_) {
    lose_buffer();
    return;
  }
  waiting_ = true;
  auto self = shared_from_this();
  watcher_->async_wait(asio::posix::stream_descriptor::wait_write,
                       [self](const boost::system::error_code& ec) {
                         self->waiting_ = false;
                         if (ec == asio::error::operation_aborted) {
                           return;
                         }
                         if (ec) {
                           self->mode_ = Mode::direct;  // epoll cannot watch it: it never blocks
                         }
                         self->flush();
                       });
}

void ConsoleSink::queue_notes() {
  for (auto& [rank, bytes] : unreported_) {
    if (bytes == 0) {
      continue;
    }
    buffer_.append(std::string(k_note_head) + std::to_string(bytes) +
                   " bytes of console output from local rank " + std::to_string(rank) + "\n");
    bytes = 0;
  }
}

// The console itself failed: what is buffered can never be shown.
void ConsoleSink::lose_buffer() {
  broken_ = true;
  buffer_.clear();
  head_ = 0;
  wake_waiters();
}

std::uint64_t ConsoleSink::dropped_bytes(int local_rank) const {
  auto it = dropped_.find(local_rank);
  return it == dropped_.end() ? 0 : it->second;
}

}  // namespace ddprun::output::detail
