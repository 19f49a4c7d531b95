// run_plan(): one child per node, a poll() loop over their output pipes and a signalfd.
//
// The forwarded signals (the agent's --signals-to-handle) and SIGCHLD are blocked and read from
// a signalfd, so there are no handlers and no races between a child's exit and poll().
// PosixLauncher unblocks the mask in each child before exec. Each child leads its own process
// group (pbsdsh/srun/ssh and anything they start locally), which is what we signal. Stopping is
// the agent's stop plan (process::make_stop_plan): SIGCONT, the received signal (SIGTERM when a
// node failed) to every live group, then SIGKILL to whatever is left once `shutdown_timeout` has
// passed. The loop ends when every child has been reaped and its pipes are at EOF; a pipe kept
// open by an escaped grandchild is given k_drain_time after the last reap, then abandoned.

#include "ddprun/fanout/run.hpp"

#include "ddprun/output/line_splitter.hpp"
#include "ddprun/process/exit_info.hpp"
#include "ddprun/process/posix_launcher.hpp"
#include "ddprun/util/exit_status.hpp"
#include "ddprun/util/fatal.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

namespace ddprun::fanout {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t k_read_bytes = 64 * 1024;
constexpr auto k_drain_time = std::chrono::milliseconds(2000);

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    auto n = write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return;  // our own stdout is gone: nothing useful left to do with the line
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

/// One output pipe of one node, copied line by line to `to_fd` behind the host prefix.
struct Stream {
  Stream(int from_fd, int copy_to_fd, std::string line_prefix)
      : fd(from_fd), to_fd(copy_to_fd), prefix(std::move(line_prefix)) {}

  int fd = -1;
  int to_fd = 1;
  std::string prefix;
  output::LineSplitter splitter;

  void emit(std::string_view line) const { write_all(to_fd, prefix + std::string(line) + "\n"); }
  void close_pipe() {
    splitter.finish([this](std::string_view line) { emit(line); });
    close(fd);
    fd = -1;
  }
  void pump() {
    std::string buf(k_read_bytes, '\0');
    auto n = read(fd, buf.data(), buf.size());
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
      return;
    }
    if (n <= 0) {
      close_pipe();
      return;
    }
    splitter.feed(std::string_view(buf.data(), static_cast<std::size_t>(n)),
                  [this](std::string_view line) { emit(line); });
  }
};

struct Child {
  const Node* node = nullptr;
  pid_t pid = -1;
  bool done = false;
  Stream out;
  Stream err;
};

sigset_t handled_signals(const std::vector<int>& forwarded) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  for (int sig : forwarded) {
    sigaddset(&set, sig);
  }
  return set;
}

int exit_code_of(int wait_status) {
  if (WIFSIGNALED(wait_status)) {
    return util::k_exit_signal_base + WTERMSIG(wait_status);
  }
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : util::k_exit_failure;
}

class Runner {
 public:
  Runner(const Plan& plan, const util::Env& env, const Stopping& stopping)
      : plan_(plan), env_(env.to_strings()), stopping_(stopping) {}

  int run();

 private:
  Result<void> spawn_all();
  Result<void> spawn(const Node& node);
  void loop();
  int poll_timeout_ms() const;
  void on_signal_fd();
  void reap();
  void on_exit(Child& child, int wait_status);
  void signal_live(int sig);
  void stop(int sig);
  void escalate();
  bool finished() const;

  const Plan& plan_;
  std::vector<std::string> env_;
  Stopping stopping_;
  process::PosixLauncher launcher_;
  std::vector<Child> children_;
  int signal_fd_ = -1;
  int status_ = 0;
  int received_signal_ = 0;
  process::StopPlan stop_plan_;  // empty until the first stop
  std::size_t next_step_ = 0;
  Clock::time_point next_step_at_{};
  std::optional<Clock::time_point> drain_until_;
};

Result<void> Runner::spawn(const Node& node) {
  std::array<int, 2> out{};
  std::array<int, 2> err{};
  if (pipe2(out.data(), O_CLOEXEC) != 0 || pipe2(err.data(), O_CLOEXEC) != 0) {
    return make_error(ErrorCode::io, "pipe2: " + std::string(std::strerror(errno)));
  }
  process::SpawnRequest request{node.argv, env_, "", out[1], err[1], {}};
  auto pid = launcher_.spawn(request);
  close(out[1]);
  close(err[1]);
  const std::string prefix = "[" + node.host + "] ";
  Child child{&node, pid ? *pid : -1, !pid, Stream{out[0], 1, prefix}, Stream{err[0], 2, prefix}};
  children_.push_back(std::move(child));
  if (!pid) {
    return make_error(ErrorCode::io, "node " + node.host + ": " + pid.error().message);
  }
  return {};
}

Result<void> Runner::spawn_all() {
  children_.reserve(plan_.nodes.size());
  for (const auto& node : plan_.nodes) {
    if (auto ok = spawn(node); !ok) {
      return ok;
    }
  }
  return {};
}

int Runner::poll_timeout_ms() const {
  std::optional<Clock::time_point> next;
  if (next_step_ < stop_plan_.size()) {
    next = next_step_at_;
  }
  if (drain_until_ && (!next || *drain_until_ < *next)) {
    next = drain_until_;
  }
  if (!next) {
    return -1;
  }
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*next - Clock::now());
  return static_cast<int>(std::max<std::int64_t>(0, left.count()) + 1);
}

void Runner::on_exit(Child& child, int wait_status) {
  child.done = true;
  const int code = exit_code_of(wait_status);
  if (code == 0 || status_ != 0 || received_signal_ != 0) {
    return;
  }
  status_ = code;
  int running = 0;
  for (const auto& c : children_) {
    running += c.done ? 0 : 1;
  }
  const std::string how = WIFSIGNALED(wait_status)
                              ? "was killed by signal " + std::to_string(WTERMSIG(wait_status))
                              : "failed with exit code " + std::to_string(code);
  write_all(2, "ddprun: node " + child.node->host + " (node_rank " +
                   std::to_string(child.node->node_rank) + ") " + how + "; stopping the other " +
                   std::to_string(running) + " node(s)\n");
  stop(SIGTERM);
}

void Runner::reap() {
  for (auto& child : children_) {
    int wait_status = 0;
    if (!child.done && waitpid(child.pid, &wait_status, WNOHANG) == child.pid) {
      on_exit(child, wait_status);
    }
  }
  if (!drain_until_ && finished()) {
    drain_until_ = Clock::now() + k_drain_time;
  }
}

void Runner::signal_live(int sig) {
  for (const auto& child : children_) {
    if (!child.done) {
      launcher_.signal_group(child.pid, sig);
    }
  }
}

/// The first stop starts the shared escalation (SIGCONT, `sig`, then SIGKILL after the
/// shutdown timeout); a later signal is forwarded at once and the escalation goes on.
void Runner::stop(int sig) {
  if (!stop_plan_.empty()) {
    signal_live(sig);
    return;
  }
  stop_plan_ = process::make_stop_plan(sig, stopping_.shutdown_timeout);
  next_step_at_ = Clock::now();
  escalate();
}

void Runner::escalate() {
  while (next_step_ < stop_plan_.size() && Clock::now() >= next_step_at_) {
    const auto& step = stop_plan_[next_step_++];
    signal_live(step.signal);
    next_step_at_ = Clock::now() + step.wait;
  }
}

void Runner::on_signal_fd() {
  signalfd_siginfo info{};
  if (read(signal_fd_, &info, sizeof info) != static_cast<ssize_t>(sizeof info)) {
    return;
  }
  const int sig = static_cast<int>(info.ssi_signo);
  if (sig == SIGCHLD) {
    reap();
    return;
  }
  received_signal_ = received_signal_ != 0 ? received_signal_ : sig;
  stop(sig);
}

bool Runner::finished() const {
  for (const auto& child : children_) {
    if (!child.done) {
      return false;
    }
  }
  return true;
}

void Runner::loop() {
  reap();  // a child may have exited before the first poll
  while (true) {
    std::vector<pollfd> fds = {{signal_fd_, POLLIN, 0}};
    std::vector<Stream*> streams;
    for (auto& child : children_) {
      for (Stream* s : {&child.out, &child.err}) {
        if (s->fd >= 0) {
          fds.push_back({s->fd, POLLIN, 0});
          streams.push_back(s);
        }
      }
    }
    if (finished() && (streams.empty() || Clock::now() >= *drain_until_)) {
      return;
    }
    if (poll(fds.data(), fds.size(), poll_timeout_ms()) < 0 && errno != EINTR) {
      throw Fatal(make_error(ErrorCode::io, "poll: " + std::string(std::strerror(errno))));
    }
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        streams[i - 1]->pump();
      }
    }
    if ((fds[0].revents & POLLIN) != 0) {
      on_signal_fd();
    }
    escalate();
  }
}

int Runner::run() {
  const sigset_t set = handled_signals(stopping_.forwarded_signals);
  sigset_t old;
  sigprocmask(SIG_BLOCK, &set, &old);
  signal_fd_ = signalfd(-1, &set, SFD_CLOEXEC);
  if (signal_fd_ < 0) {
    throw Fatal(make_error(ErrorCode::io, "signalfd: " + std::string(std::strerror(errno))));
  }
  auto spawned = spawn_all();
  if (!spawned) {
    write_all(2, "ddprun: " + spawned.error().message + "; stopping the other nodes\n");
    status_ = 1;
    stop(SIGTERM);
  }
  loop();
  close(signal_fd_);
  sigprocmask(SIG_SETMASK, &old, nullptr);
  // Like the agent, a launch stopped by a signal exits 128 + N (torchrun: 1), whatever the
  // nodes' own statuses: the job was stopped, it did not fail.
  return received_signal_ != 0 ? util::exit_for_signal(received_signal_) : status_;
}

}  // namespace

int run_plan(const Plan& plan, const util::Env& env, const Stopping& stopping) {
  return Runner(plan, env, stopping).run();
}

}  // namespace ddprun::fanout
