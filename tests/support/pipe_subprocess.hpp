#pragma once
// A child process with its stdout+stderr on a pipe, for component tests that drive
// /usr/bin/python3 helpers. Every read is bounded; the destructor kills and reaps the child.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/subprocess.hpp"

extern char** environ;

namespace ddprun::test {

class Subprocess {
 public:
  static std::unique_ptr<Subprocess> spawn(const std::vector<std::string>& argv) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      return nullptr;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    std::vector<char*> args = exec_args(argv);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (rc != 0) {
      close(fds[0]);
      return nullptr;
    }
    return std::unique_ptr<Subprocess>(new Subprocess(pid, fds[0]));
  }

  ~Subprocess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(fd_);
  }
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  /// The next output line without '\n'; nullopt on EOF or when `timeout` passes.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto nl = buf_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return line;
      }
      if (!fill(deadline)) {
        return std::nullopt;
      }
    }
  }

  /// Everything until EOF (or the timeout), including what read_line has buffered.
  std::string read_all(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (fill(deadline)) {
    }
    return std::exchange(buf_, std::string());
  }

 private:
  Subprocess(pid_t pid, int fd) : pid_(pid), fd_(fd) {}

  bool fill(std::chrono::steady_clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return false;
    }
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) {
      return false;
    }
    char chunk[4096];
    const ssize_t n = read(fd_, chunk, sizeof chunk);
    if (n <= 0) {
      return false;
    }
    buf_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }

  pid_t pid_;
  int fd_;
  std::string buf_;
};

}  // namespace ddprun::test
