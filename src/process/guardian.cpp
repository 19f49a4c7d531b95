// The guardian process (see include/ddprun/process/guardian.hpp).
//
// Sequence:
//   1. The agent creates an AF_UNIX SOCK_SEQPACKET pair (one message per record, CLOEXEC) and
//      forks. The child is the guardian; from here on it only makes syscalls and uses the fixed
//      storage of GuardedGroups, so it is safe even if the agent had threads at fork time.
//   2. Guardian: leave the agent's process group, reset every signal to its default and ignore
//      the catchable termination signals, close every fd but stderr and its socket end, and
//      check the agent is still its parent (if the agent died during the fork, exit).
//   3. Guardian: read messages until end-of-file. The agent's end closes when the agent exits
//      for any reason, SIGKILL included: the kernel closes the fds of a dead process.
//   4. Guardian: SIGKILL every group still watched; say so on stderr if any group was still
//      there (an agent that exits normally has stopped and forgotten them all).
//   5. Guardian: when the agent left a notice (guardian_notice.hpp; an agent that ends in order
//      clears it), run `ddprun __agent-died` with it and wait for that, bounded; exit.
// The agent sends with MSG_NOSIGNAL, so a dead guardian costs it an error, not a SIGPIPE.

#include "ddprun/process/guardian.hpp"

#include "ddprun/process/guardian_notice.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

namespace ddprun::process {

namespace {

constexpr int k_ignored_signals[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGTERM, SIGUSR1,
                                     SIGUSR2, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU};

/// Returns the socket's fd, moved above stdio if the agent had 0 or 1 closed.
int detach_from_agent(int keep_fd) {
  if (keep_fd < 3) {
    keep_fd = fcntl(keep_fd, F_DUPFD, 3);
  }
  setpgid(0, 0);
  prctl(PR_SET_NAME, "ddprun-guard");
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    sigaction(sig, &dfl, nullptr);
  }
  for (int sig : k_ignored_signals) {
    (void)signal(sig, SIG_IGN);  // best effort: a failure leaves the default, still safe
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  close(0);
  close(1);
  if (keep_fd > 3) {
    close_range(3, static_cast<unsigned>(keep_fd) - 1, 0);
  }
  close_range(static_cast<unsigned>(keep_fd) + 1, ~0U, 0);
  return keep_fd;
}

/// "ddprun: guardian: agent <pid> ended without stopping its workers; killed <n> ...", no
/// allocation.
void report(pid_t agent, int killed) {
  char line[160];
  char* p = line;
  char* end = line + sizeof line;
  auto put = [&](std::string_view s) {
    std::size_t n = std::min(s.size(), static_cast<std::size_t>(end - p));
    std::memcpy(p, s.data(), n);
    p += n;
  };
  put("ddprun: guardian: agent ");
  p = std::to_chars(p, end, agent).ptr;
  put(" ended without stopping its workers; killed ");
  p = std::to_chars(p, end, killed).ptr;
  put(" worker process group(s)\n");
  auto n = write(2, line, static_cast<std::size_t>(p - line));
  (void)n;
}

[[noreturn]] void guard(int agent_fd, pid_t agent) {
  char exe[PATH_MAX] = {};  // read now: the path may name another binary by the time it is used
  auto exe_len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[exe_len > 0 ? exe_len : 0] = '\0';
  int fd = detach_from_agent(agent_fd);
  if (fd < 0 || getppid() != agent) {
    _exit(0);
  }
  GuardedGroups groups;
  HeldNotice notice;
  unsigned char buf[k_max_guard_message + 1];
  while (true) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;
    }
    if (auto message = decode_guard_message(buf, static_cast<std::size_t>(n))) {
      groups.apply(*message);
      notice.apply(*message);
    }
  }
  int killed = 0;
  for (pid_t pgid : groups) {
    killed += kill(-pgid, SIGKILL) == 0 ? 1 : 0;
  }
  if (killed > 0) {
    report(agent, killed);
  }
  if (!notice.empty()) {
    deliver_notice(exe, agent, notice);
  }
  _exit(0);
}

}  // namespace

Result<Guardian> Guardian::start() {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
    return make_error(ErrorCode::io, std::string("guardian socketpair: ") + std::strerror(errno));
  }
  pid_t agent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(fds[0]);
    close(fds[1]);
    return make_error(ErrorCode::io, std::string("guardian fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    guard(fds[1], agent);
  }
  close(fds[1]);
  Guardian g;
  g.fd_ = fds[0];
  g.pid_ = pid;
  return g;
}

Guardian::Guardian(Guardian&& other) noexcept : fd_(other.fd_), pid_(other.pid_) {
  other.fd_ = -1;
  other.pid_ = -1;
}

Guardian& Guardian::operator=(Guardian&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) {
      close(fd_);
    }
    fd_ = std::exchange(other.fd_, -1);
    pid_ = std::exchange(other.pid_, -1);
  }
  return *this;
}

Guardian::~Guardian() {
  if (fd_ >= 0) {
    close(fd_);
  }
}

bool Guardian::watch(pid_t pgid) { return send(GuardMessage{GuardMessage::Op::watch, pgid}); }

bool Guardian::forget(pid_t pgid) { return send(GuardMessage{GuardMessage::Op::forget, pgid}); }

bool Guardian::notice(std::string_view payload) {
  if (payload.empty() || payload.size() > k_max_notice_bytes) {
    return false;
  }
  std::vector<unsigned char> bytes(k_guard_op_size + payload.size());
  const auto op = static_cast<std::int32_t>(GuardMessage::Op::notice);
  std::memcpy(bytes.data(), &op, sizeof op);
  std::memcpy(bytes.data() + k_guard_op_size, payload.data(), payload.size());
  return send_bytes(bytes.data(), bytes.size());
}

bool Guardian::clear_notice() {
  unsigned char bytes[k_guard_op_size];
  const auto op = static_cast<std::int32_t>(GuardMessage::Op::clear_notice);
  std::memcpy(bytes, &op, sizeof op);
  return send_bytes(bytes, sizeof bytes);
}

bool Guardian::send(const GuardMessage& message) {
  auto bytes = encode_guard_message(message);
  return send_bytes(bytes.data(), bytes.size());
}

bool Guardian::send_bytes(const unsigned char* data, std::size_t size) {
  if (fd_ < 0) {
    return false;
  }
  ssize_t n = 0;
  do {
    n = ::send(fd_, data, size, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(size);
}

}  // namespace ddprun::process
