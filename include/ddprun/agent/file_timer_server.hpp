#pragma once
// FileTimerServer: the I/O shell of torchrun's file-timer watchdog (spec torchrun.md §8.3).
// For each worker group it creates a FIFO, reads the JSON lines torch's FileTimerClient writes
// into it on the agent's io_context (no thread), keeps the timers in a TimerTable and wakes at
// the earliest expiration to report what ran out. It signals nothing itself: the supervisor
// decides (Watchdog seam). A malformed line is logged and skipped; it never stops the reader.

#include "ddprun/agent/file_timer.hpp"
#include "ddprun/agent/seams.hpp"
#include "ddprun/net/asio.hpp"
#include "ddprun/util/clock.hpp"
#include "ddprun/util/env.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace ddprun::agent {

class FileTimerServer final : public Watchdog {
 public:
  /// `path`: the FIFO to create at each start; empty: a fresh `<temp_dir>/watchdog_timer_<id>`
  /// at each start, like torchrun.
  FileTimerServer(asio::io_context& ctx, const util::Clock& clock, std::string path,
                  std::string temp_dir);
  ~FileTimerServer() override;
  FileTimerServer(const FileTimerServer&) = delete;
  FileTimerServer& operator=(const FileTimerServer&) = delete;

  Result<std::string> start(std::function<void(TimerExpiry)> on_expired) override;
  void forget(pid_t pid) override;
  void stop() override;

  /// A worker that talks to its watchdog is making progress (the stall watchdog's input).
  util::SteadyTime last_request() const override { return last_request_; }

 private:
  struct Channel;
  asio::awaitable<void> read_loop(std::shared_ptr<Channel> ch);
  asio::awaitable<void> expiry_loop(std::shared_ptr<Channel> ch);
  void handle_line(Channel& ch, std::string_view line);
  std::string next_path() const;

  asio::io_context& ctx_;
  const util::Clock& clock_;
  std::string path_;
  std::string temp_dir_;
  util::SteadyTime last_request_{};
  std::shared_ptr<Channel> channel_;
};

/// The watchdog the launcher's environment asks for: a server when
/// TORCHELASTIC_ENABLE_FILE_TIMER=1 (at TORCHELASTIC_TIMER_FILE, else under TMPDIR or /tmp),
/// nullptr otherwise (a set TORCHELASTIC_TIMER_FILE then reaches the workers unchanged).
std::unique_ptr<FileTimerServer> make_file_timer_server(asio::io_context& ctx,
                                                        const util::Clock& clock,
                                                        const util::Env& env);

}  // namespace ddprun::agent
