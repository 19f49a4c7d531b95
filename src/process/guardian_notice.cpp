// The guardian hands its notice to `ddprun __agent-died` (see guardian_notice.hpp). Runs in the
// forked guardian: syscalls and fixed buffers only.

#include "ddprun/process/guardian_notice.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <ctime>
#include <string_view>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX, not in <unistd.h>

namespace ddprun::process {

namespace {

constexpr long k_poll_ns = 10'000'000;  // 10 ms between looks at the command
constexpr int k_default_signals[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGTERM, SIGUSR1,
                                     SIGUSR2, SIGTSTP, SIGTTIN, SIGTTOU};

void say(std::string_view what) {
  constexpr std::string_view prefix = "ddprun: guardian: cannot tell the other nodes: ";
  char line[256];
  std::size_t n = std::min(prefix.size(), sizeof line);
  std::memcpy(line, prefix.data(), n);
  std::size_t m = std::min(what.size(), sizeof line - n - 1);
  std::memcpy(line + n, what.data(), m);
  line[n + m] = '\n';
  auto w = write(2, line, n + m + 1);
  (void)w;
}

[[noreturn]] void run_command(int in, const char* exe, char* agent_text) {
  // The guardian closed stdin and stdout, so the pipe may already be fd 0: dup2 onto itself
  // would keep its CLOEXEC.
  if (in == 0) {
    fcntl(0, F_SETFD, 0);
  } else {
    dup2(in, 0);  // the copy has no CLOEXEC
  }
  dup2(2, 1);
  for (int sig : k_default_signals) {
    (void)signal(sig, SIG_DFL);  // the guardian ignored them; SIGPIPE stays ignored
  }
  // execve does not write to its arguments.
  char* argv[] = {const_cast<char*>("ddprun"), const_cast<char*>(k_agent_died_command), agent_text,
                  nullptr};
  // /proc/self/exe is this very binary even when its path was replaced meanwhile (an upgrade):
  // the command then decodes the payload with the code that encoded it.
  execve("/proc/self/exe", argv, environ);
  if (exe[0] != '\0') {
    execve(exe, argv, environ);
  }
  say("cannot execute ddprun");
  _exit(127);
}

void write_all(int fd, const unsigned char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return;  // the command ended early: it says why
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

void wait_bounded(pid_t child) {
  const long polls = std::chrono::nanoseconds(k_notice_wait).count() / k_poll_ns;
  for (long i = 0; i < polls; ++i) {
    int status = 0;
    pid_t r = waitpid(child, &status, WNOHANG);
    if (r == child || (r < 0 && errno != EINTR)) {
      return;
    }
    struct timespec pause {
      0, k_poll_ns
    };
    nanosleep(&pause, nullptr);
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  say("ddprun __agent-died did not finish within 10 s (killed)");
}

}  // namespace

void deliver_notice(const char* exe, pid_t agent, const HeldNotice& notice) noexcept {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    say("pipe2 failed");
    return;
  }
  char agent_text[16] = {};
  std::to_chars(agent_text, agent_text + sizeof agent_text - 1, agent);
  pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    say("fork failed");
    return;
  }
  if (child == 0) {
    close(fds[1]);
    run_command(fds[0], exe, agent_text);
  }
  close(fds[0]);
  write_all(fds[1], notice.data(), notice.size());
  close(fds[1]);
  wait_bounded(child);
}

}  // namespace ddprun::process
