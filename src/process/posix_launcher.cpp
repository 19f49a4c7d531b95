// fork/exec of one worker.
//
// Sequence (parent side first, everything allocated before fork):
//   1. Resolve argv[0] against the child's PATH and build argv/envp pointer arrays.
//   2. Create a CLOEXEC error pipe. fork().
// Child (only async-signal-safe calls from here on):
//   3. setpgid(0, 0): the worker leads its own process group, so killpg reaches grandchildren.
//   4. prctl(PR_SET_PDEATHSIG, SIGKILL), then compare getppid() with the parent's pid captured
//      before fork: if the agent already died in between, exit at once (closes the race).
//   5. Reset every signal disposition to default (ignored signals survive exec otherwise) and
//      unblock the whole mask (Asio's signal_set does not block, but callers might).
//   6. dup2 the planned stdout/stderr fds, apply the CPU affinity, close every fd >= 3 except
//      the error pipe, chdir, execve.
//   7. On failure write errno into the pipe and _exit(127 for ENOENT, else 126), as tini does.
// Parent:
//   8. setpgid(pid, pid) as well, so the group exists before we ever signal it.
//      With a guardian, the group is watched from here on (forgotten again if exec fails).
//   9. Read the pipe: EOF means exec succeeded; 4 bytes mean exec failed with that errno, and
//      the child is reaped here so the agent's reaper never sees an unknown pid.
// The agent is single-threaded and reaps only from its event loop, so the pid is recorded
// (by our caller) before any SIGCHLD for it can be handled.

#include "ddprun/process/posix_launcher.hpp"

#include "ddprun/process/exit_info.hpp"
#include "ddprun/util/env.hpp"
#include "ddprun/util/exec_args.hpp"
#include "ddprun/util/exit_status.hpp"
#include "ddprun/util/files.hpp"
#include "ddprun/util/strings.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

namespace ddprun::process {

namespace {

std::string path_of(const std::vector<std::string>& env) {
  for (const auto& e : env) {
    if (util::starts_with(e, "PATH=")) {
      return e.substr(5);
    }
  }
  return "/usr/local/bin:/usr/bin:/bin";
}

[[noreturn]] void child_fail(int err_fd, int err) {
  auto n = write(err_fd, &err, sizeof err);
  (void)n;
  _exit(err == ENOENT ? util::k_exit_not_found : util::k_exit_cannot_execute);
}

struct ChildPlan {
  const char* path;
  char** argv;
  char** envp;
  const char* cwd;
  int stdout_fd;
  int stderr_fd;
  const cpu_set_t* affinity;
  pid_t parent;
  int err_fd;
};

[[noreturn]] void run_child(const ChildPlan& p) {
  setpgid(0, 0);
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != p.parent) {
    _exit(126);
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    sigaction(sig, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if ((p.stdout_fd >= 0 && dup2(p.stdout_fd, 1) < 0) ||
      (p.stderr_fd >= 0 && dup2(p.stderr_fd, 2) < 0)) {
    child_fail(p.err_fd, errno);
  }
  if (p.affinity != nullptr && sched_setaffinity(0, sizeof(cpu_set_t), p.affinity) != 0) {
    child_fail(p.err_fd, errno);
  }
  if (p.err_fd > 3) {
    close_range(3, static_cast<unsigned>(p.err_fd) - 1, 0);
  }
  close_range(static_cast<unsigned>(p.err_fd) + 1, ~0U, 0);
  if (p.cwd != nullptr && chdir(p.cwd) != 0) {
    child_fail(p.err_fd, errno);
  }
  execve(p.path, p.argv, p.envp);
  child_fail(p.err_fd, errno);
}

Result<pid_t> await_exec(pid_t pid, int read_fd, const std::string& path) {
  int child_errno = 0;
  ssize_t n = 0;
  do {
    n = read(read_fd, &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  close(read_fd);
  if (n == 0) {
    return pid;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (n != static_cast<ssize_t>(sizeof child_errno)) {
    return make_error(ErrorCode::io, "exec " + util::quoted(path) + ": child failed before exec");
  }
  return make_error(ErrorCode::io, "cannot execute " + util::quoted(path) + ": " +
                                       std::strerror(child_errno) + " (errno " +
                                       std::to_string(child_errno) + ")");
}

}  // namespace

Result<std::string> resolve_executable(const std::string& program, const std::string& path_var) {
  if (program.empty()) {
    return make_error(ErrorCode::config, "empty program name");
  }
  if (program.find('/') != std::string::npos) {
    if (access(program.c_str(), F_OK) != 0) {
      return make_error(ErrorCode::config, "cannot execute " + util::quoted(program) +
                                               ": No such file or directory (errno 2)");
    }
    return program;
  }
  if (auto found = util::executables_on_path(program, path_var); !found.empty()) {
    return found.front();
  }
  return make_error(ErrorCode::config,
                    "cannot execute " + util::quoted(program) + ": not found in PATH=" + path_var);
}

Result<pid_t> PosixLauncher::spawn(const SpawnRequest& request) {
  auto path = resolve_executable(request.argv.at(0), path_of(request.env));
  if (!path) {
    return path.error();
  }
  auto argv = util::exec_args(request.argv);
  auto envp = util::exec_args(request.env);
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (int cpu : request.cpu_affinity) {
    CPU_SET(static_cast<std::size_t>(cpu), &cpus);
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return make_error(ErrorCode::io, std::string("pipe2: ") + std::strerror(errno));
  }
  ChildPlan plan{path->c_str(),
                 argv.data(),
                 envp.data(),
                 request.cwd.empty() ? nullptr : request.cwd.c_str(),
                 request.stdout_fd,
                 request.stderr_fd,
                 request.cpu_affinity.empty() ? nullptr : &cpus,
                 getpid(),
                 fds[1]};
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(fds[0]);
    close(fds[1]);
    return make_error(ErrorCode::io, std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    close(fds[0]);
    run_child(plan);
  }
  close(fds[1]);
  setpgid(pid, pid);  // EACCES after exec is fine: the child already did it
  if (guardian_ != nullptr) {
    guardian_->watch(pid);  // before exec completes: the group exists from here on
  }
  auto started = await_exec(pid, fds[0], *path);
  if (!started && guardian_ != nullptr) {
    guardian_->forget(pid);
  }
  return started;
}

bool PosixLauncher::signal_group(pid_t pgid, int sig) {
  if (pgid <= 1) {
    return false;  // never signal init's or our caller's whole world by accident
  }
  return kill(-pgid, sig) == 0;
}

void PosixLauncher::forget_group(pid_t pgid) {
  if (guardian_ != nullptr) {
    guardian_->forget(pgid);
  }
}

std::vector<Reaped> PosixLauncher::reap_exited() { return process::reap_exited(); }

bool PosixLauncher::group_alive(pid_t pgid) const { return process::group_alive(pgid); }

void PosixLauncher::become_subreaper() { process::become_subreaper(); }

bool PosixLauncher::signal_ends(pid_t pid, int sig) const {
  return signal_ends_process(
      util::read_file("/proc/" + std::to_string(pid) + "/status").value_or(""), sig);
}

ProcessState PosixLauncher::state_of(pid_t pid) const {
  const std::string proc = "/proc/" + std::to_string(pid);
  ProcessState s;
  s.state = parse_stat_state(util::read_file(proc + "/stat").value_or(""));
  const auto wchan = util::read_file(proc + "/wchan").value_or("");
  s.wchan = wchan == "0" ? "" : std::string(util::trim(wchan));
  return s;
}

void become_subreaper() { prctl(PR_SET_CHILD_SUBREAPER, 1); }

bool group_alive(pid_t pgid) { return pgid > 1 && kill(-pgid, 0) == 0; }

}  // namespace ddprun::process

namespace ddprun::process {

std::vector<Reaped> reap_exited() {
  std::vector<Reaped> out;
  while (true) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      out.push_back({pid, status});
      continue;
    }
    if (pid < 0 && errno == EINTR) {
      continue;
    }
    return out;
  }
}

}  // namespace ddprun::process
