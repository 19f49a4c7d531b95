#pragma once
// Module-private: reads one worker stream from its pipe on the agent's io_context. Raw
// bytes go to the log file (never dropped; write errors are counted), whole lines go to
// the console sink with the prefix, and stderr keeps a short tail for the failure summary.

#include "ddprun/net/asio.hpp"
#include "ddprun/output/line_splitter.hpp"
#include "ddprun/util/clock.hpp"

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "console_sink.hpp"

namespace ddprun::output::detail {

struct PipeReaderConfig {
  int file_fd = -1;                      ///< owned; -1 for no file copy
  std::string file_path;                 ///< for the note about failed writes
  std::shared_ptr<ConsoleSink> console;  ///< null: no console copy
  std::shared_ptr<ConsoleSink> notes;    ///< where a failed-write note goes (agent stderr)
  /// Bytes to the console as they come (no prefix, '\r' progress bars kept), not line by line;
  /// a piece after the last '\n' or '\r' waits up to raw_hold (from its first bytes) for the
  /// rest of its line, so that unbuffered workers' lines (a print is two writes, the text and
  /// the newline) do not interleave mid-line. The console is then the stream's only copy: nothing
  /// is dropped, and reading pauses while the console is full, so a slow console slows the worker
  /// down as when the worker writes to it itself.
  bool raw_console = false;
  std::chrono::milliseconds raw_hold{250};
  /// Set to the time of each read that brought bytes (the stall watchdog's input).
  std::shared_ptr<std::chrono::steady_clock::time_point> activity;
  const util::Clock* clock = nullptr;  ///< the time `activity` is stamped with (set with it)
  int local_rank = 0;
  std::size_t tail_lines = 0;  ///< 0: keep no tail
  std::size_t max_line = k_max_line_bytes;
  std::size_t read_chunk = 64 * 1024;
  /// A read of fewer bytes than small_read waits `coalesce` before the next (0: never).
  std::size_t small_read = 4096;
  std::chrono::microseconds coalesce{1000};
};

class PipeReader : public std::enable_shared_from_this<PipeReader> {
 public:
  PipeReader(asio::io_context& ctx, int read_fd, PipeReaderConfig config);
  ~PipeReader();
  PipeReader(const PipeReader&) = delete;
  PipeReader& operator=(const PipeReader&) = delete;

  /// Starts reading, console lines prefixed with `prefix` (unless raw_console); on_eof runs
  /// once when the pipe is closed by every writer.
  void start(std::string prefix, std::function<void()> on_eof);
  /// Stops reading: what is already in the pipe is still taken, the partial last line is
  /// flushed and the pipe and file are closed from the next handler run on the
  /// io_context; on_eof is not called.
  void stop();

  bool at_eof() const { return eof_; }
  std::vector<std::string> tail(std::size_t n) const;
  std::uint64_t file_error_bytes() const { return file_errors_; }

 private:
  void read_some();
  void after_read(const boost::system::error_code& ec, std::size_t n);
  void delay_read();
  void reattach();
  /// Raw console full: stop reading until it drains (the worker blocks on a full pipe).
  void pause();
  void resume();
  void on_data(std::string_view data);
  void on_line(std::string_view line);
  void write_file(std::string_view data);
  void drain_ready();
  void to_console_raw(std::string_view data);
  void flush_held();
  void arm_hold(std::chrono::steady_clock::duration after);
  void finish();
  void report_file_errors();

  asio::posix::stream_descriptor pipe_;
  PipeReaderConfig config_;
  std::vector<char> buffer_;
  LineSplitter splitter_;
  std::string prefix_;
  std::deque<std::string> tail_;
  std::string held_;  ///< raw console bytes after the last line end, waiting for the rest
  asio::steady_timer hold_timer_;
  asio::steady_timer coalesce_timer_;
  std::chrono::steady_clock::time_point held_since_;  ///< when held_'s first bytes came
  bool hold_armed_ = false;
  std::function<void()> on_eof_;
  std::uint64_t file_errors_ = 0;
  int file_errno_ = 0;
  bool eof_ = false;
  bool started_ = false;
  bool stopping_ = false;
  int released_fd_ = -1;  ///< the pipe while out of the reactor (delay_read)
  bool paused_ = false;   ///< no read pending: the console is full, or a read is delayed
};

/// The last n lines of a file (reads at most its last 64 KiB); empty when unreadable.
std::vector<std::string> read_file_tail_lines(const std::string& path, std::size_t n);

}  // namespace ddprun::output::detail
