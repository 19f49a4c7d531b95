#pragma once
// Module-private: the agent's console (its stdout or stderr) as a bounded, never-blocking
// sink for prefixed worker lines.
//
// The console's open file description is shared with workers that inherit it, so setting
// O_NONBLOCK on fd 1 or 2 would make *their* writes fail with EAGAIN. Instead the sink
// opens its own description of the same tty or pipe through /proc/self/fd/N with
// O_NONBLOCK; sockets use send(MSG_DONTWAIT); regular files and other devices that never
// block are written directly. When /proc is unavailable, a dup is written only after
// poll() reports room, at most PIPE_BUF bytes at a time. Lines that do not fit in the
// bounded buffer are dropped and counted per local rank, and a note saying how many bytes
// were dropped is written once the buffer has drained.

#include "ddprun/net/asio.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::output::detail {

class ConsoleSink : public std::enable_shared_from_this<ConsoleSink> {
 public:
  ConsoleSink(asio::io_context& ctx, int fd, std::size_t capacity);
  ~ConsoleSink();
  ConsoleSink(const ConsoleSink&) = delete;
  ConsoleSink& operator=(const ConsoleSink&) = delete;

  /// Queues prefix + line + '\n', or drops and counts it when the buffer is full.
  void append_line(std::string_view prefix, std::string_view line, int local_rank);
  /// Queues bytes as they came (a pass-through stream: partial lines, '\r' progress bars).
  /// They are the stream's only copy, so they are always queued unless the console failed;
  /// their reader bounds the buffer through full() and when_room().
  void append_bytes(std::string_view bytes);
  /// The buffer holds its capacity or more: a reader that must not lose bytes stops reading.
  bool full() const { return buffered_bytes() >= capacity_; }
  /// Runs `ready` (posted, once) when the buffer is down to half its capacity or the console
  /// failed.
  void when_room(std::function<void()> ready);
  /// Writes what the console takes now; waits asynchronously for the rest.
  void flush();

  std::uint64_t dropped_bytes(int local_rank) const;
  std::size_t buffered_bytes() const { return buffer_.size() - head_; }

 private:
  enum class Mode { direct, nonblocking, socket, guarded };
  void open_private(int fd);
  /// False (and the bytes counted as dropped) when `size` more bytes do not fit.
  bool make_room(std::size_t size, int local_rank);
  void compact();
  long write_some(std::string_view data);
  void wait_writable();
  void queue_notes();
  void lose_buffer();
  void wake_waiters();

  Mode mode_ = Mode::direct;
  int fd_ = -1;
  std::optional<asio::posix::stream_descriptor> watcher_;
  std::string buffer_;
  std::size_t head_ = 0;
  std::size_t capacity_;
  bool waiting_ = false;
  bool broken_ = false;  // the console failed (EPIPE, EIO): everything counts as dropped
  std::map<int, std::uint64_t> dropped_;
  std::map<int, std::uint64_t> unreported_;
  asio::any_io_executor executor_;
  std::vector<std::function<void()>> room_waiters_;
};

}  // namespace ddprun::output::detail
