#pragma once
// A launcher whose stdout is a pipe the test reads late (a slow console): for the output
// e2e tests (drops reported under -t, nothing lost through the line router).

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "support/subprocess.hpp"

namespace ddprun::test {

struct PipedRun {
  int status = -1;
  std::uint64_t console_bytes = 0;
  bool console_mentions_drop = false;
  std::string console_head;  ///< the console's first k_console_head_bytes
  std::string console_pipe;  ///< the pipe as /proc/PID/fd shows it: "pipe:[INODE]"
  std::string err;
};

inline constexpr std::size_t k_console_head_bytes = 1 << 20;

inline pid_t spawn_with_stdout(const std::vector<std::string>& argv, int out_fd,
                               const std::string& err_path) {
  auto cargv = exec_args(argv);
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out_fd, 1);
    dup2(err, 2);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  setpgid(pid, pid);
  return pid;
}

/// What `fd` gives until `wanted` appears in it, EOF, or `timeout`.
inline std::string read_until(int fd, const std::string& wanted, std::chrono::seconds timeout) {
  std::string shown;
  std::vector<char> buf(4096);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (shown.find(wanted) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    struct pollfd p {
      fd, POLLIN, 0
    };
    if (poll(&p, 1, 100) > 0) {
      auto n = read(fd, buf.data(), buf.size());
      if (n <= 0) {
        break;
      }
      shown.append(buf.data(), static_cast<std::size_t>(n));
    }
  }
  return shown;
}

/// Reads `fd` to EOF (bounded), counting bytes and looking for a "dropped" note.
inline void read_console(int fd, PipedRun& r) {
  std::string window;
  std::vector<char> buf(65536);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    struct pollfd p {
      fd, POLLIN, 0
    };
    if (poll(&p, 1, 100) <= 0) {
      continue;
    }
    auto n = read(fd, buf.data(), buf.size());
    if (n <= 0) {
      return;
    }
    r.console_bytes += static_cast<std::uint64_t>(n);
    if (r.console_head.size() < k_console_head_bytes) {
      r.console_head.append(buf.data(), static_cast<std::size_t>(n));
    }
    window = window.substr(window.size() > 64 ? window.size() - 64 : 0) +
             std::string(buf.data(), static_cast<std::size_t>(n));
    r.console_mentions_drop =
        r.console_mentions_drop || window.find("dropped") != std::string::npos;
  }
}

/// Starts argv with stdout on a pipe the test only starts reading once `ready()` holds (or
/// the launcher has exited), then reads it to EOF. Every wait is bounded.
template <typename Ready>
PipedRun run_with_slow_console(const std::vector<std::string>& argv, Ready ready) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return {};
  }
  auto err_dir = make_temp_dir("ddprun-pipe-");
  pid_t pid = spawn_with_stdout(argv, fds[1], err_dir + "/err");
  close(fds[1]);
  PipedRun r;
  struct stat st {};
  if (fstat(fds[0], &st) == 0) {
    r.console_pipe = "pipe:[" + std::to_string(st.st_ino) + "]";
  }
  int status = 0;
  bool exited = false;
  auto reaped = [&] { return exited = exited || waitpid(pid, &status, WNOHANG) == pid; };
  eventually([&] { return reaped() || ready(); }, std::chrono::seconds(90));
  read_console(fds[0], r);
  close(fds[0]);
  if (eventually(reaped, std::chrono::seconds(30))) {
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  } else {
    kill(-pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  r.err = read_file(err_dir + "/err");
  std::filesystem::remove_all(err_dir);
  return r;
}

}  // namespace ddprun::test
