// Taking stacks, in parallel and bounded by k_capture_bound:
//   1. Read every target's /proc state and wait channel first: the fallback, and a note
//      for ranks whose tool gives nothing.
//   2. Tools (py-spy, eu-stack, gdb) run as children of the agent with stdout and stderr on a
//      pipe, all started at once; their pipes are read to EOF under one deadline, after which
//      a tool still running is killed. The supervisor's SIGCHLD loop reaps them (they are
//      not workers, so it only logs them at debug level).
//   3. faulthandler: core dumps are switched off for the worker (prlimit), then SIGABRT, the
//      least surprising of the signals faulthandler dumps on; the worker prints every thread's
//      traceback on its stderr, which the agent reads, and dies. The supervisor marked it
//      stop-requested before, so its exit is no new failure.
#include "ddprun/agent/stack_capture.hpp"

#include "ddprun/output/log_paths.hpp"
#include "ddprun/process/launcher.hpp"
#include "ddprun/util/files.hpp"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace ddprun::agent {

namespace {

constexpr std::string_view k_faulthandler_start = "Fatal Python error";
/// How often a signalled worker is checked for having died (its dump is then complete).
constexpr std::chrono::milliseconds k_poll_step{20};
/// After the workers died: time for the agent's pipe readers to take what they wrote.
constexpr std::chrono::milliseconds k_read_settle{100};

struct Tool {
  StackMethod method = StackMethod::proc;
  std::string path;
};

Tool choose_tool(const config::WorkerCommand& cfg, const util::Env& env) {
  const auto path_var = env.get("PATH").value_or("/usr/bin:/bin");
  auto find = [&](const std::string& name) { return process::resolve_executable(name, path_var); };
  if (!cfg.no_python) {
    auto py_spy = find(env.get_nonempty(k_py_spy_env).value_or("py-spy"));
    return py_spy ? Tool{StackMethod::py_spy, *py_spy} : Tool{StackMethod::faulthandler, ""};
  }
  for (auto [method, name] :
       {std::pair{StackMethod::eu_stack, "eu-stack"}, std::pair{StackMethod::gdb, "gdb"}}) {
    if (auto found = find(name)) {
      return Tool{method, *found};
    }
  }
  return Tool{};
}

std::vector<std::string> tool_argv(const Tool& tool, pid_t pid) {
  const auto p = std::to_string(pid);
  switch (tool.method) {
    case StackMethod::py_spy:
      return {tool.path, "dump", "--pid", p};
    case StackMethod::eu_stack:
      return {tool.path, "-p", p};
    case StackMethod::gdb:
      return {tool.path, "-p", p, "-batch", "-nx", "-ex", "thread apply all bt"};
    case StackMethod::faulthandler:
    case StackMethod::proc:
      break;
  }
  return {};
}

std::vector<errors::ThreadStack> parse_capture(StackMethod method, std::string_view text) {
  switch (method) {
    case StackMethod::py_spy:
      return errors::parse_py_spy(text);
    case StackMethod::faulthandler:
      return errors::parse_faulthandler(text);
    case StackMethod::eu_stack:
    case StackMethod::gdb:
      return errors::parse_native(text);
    case StackMethod::proc:
      break;
  }
  return {};
}

std::string read_text(const std::string& path) { return util::read_file(path).value_or(""); }

/// Running or sleeping; false once it exited (a zombie) or was reaped.
bool is_alive(pid_t pid) {
  const auto stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z' &&
         stat[close + 2] != 'X';
}

asio::awaitable<void> pause(asio::steady_timer& timer, std::chrono::milliseconds how_long) {
  timer.expires_after(how_long);
  boost::system::error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

std::string proc_state(pid_t pid) {
  const auto dir = "/proc/" + std::to_string(pid);
  return errors::render_proc_state(read_text(dir + "/stat"), read_text(dir + "/wchan"));
}

/// Starts `argv` with stdout and stderr on a pipe; returns the pid and the read end.
Result<std::pair<pid_t, int>> start_tool(const std::vector<std::string>& argv) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return make_error(ErrorCode::io, "pipe2 for " + argv.front() + " failed");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  std::vector<char*> args;
  for (const auto& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));  // NOLINT: posix_spawn's signature
  }
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, argv.front().c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return make_error(ErrorCode::io, "posix_spawn(" + argv.front() + "): " + std::strerror(rc));
  }
  return std::pair{pid, fds[0]};
}

struct ToolOutput {
  std::string text;
  bool complete = false;  ///< EOF reached: the tool closed its end (it exited)
};

/// Reads `fd` (owned) to EOF or the deadline, whichever comes first.
asio::awaitable<ToolOutput> read_until(asio::io_context& ctx, int fd,
                                       std::chrono::steady_clock::time_point deadline) {
  asio::posix::stream_descriptor pipe(ctx, fd);
  asio::steady_timer timer(ctx, deadline);
  timer.async_wait([&pipe](const boost::system::error_code& ec) {
    if (!ec) {
      boost::system::error_code ignored;
      pipe.cancel(ignored);
    }
  });
  ToolOutput out;
  std::array<char, 8192> buf{};
  while (true) {
    boost::system::error_code ec;
    auto n = co_await pipe.async_read_some(asio::buffer(buf),
                                           asio::redirect_error(asio::use_awaitable, ec));
    out.text.append(buf.data(), n);
    if (ec) {
      out.complete = ec == asio::error::eof;
      break;
    }
  }
  timer.cancel();
  co_return out;
}

/// The faulthandler dump at the end of a worker's stderr, from its last "Fatal Python error".
std::string dump_in(const std::vector<std::string>& lines) {
  std::size_t start = lines.size();
  for (std::size_t i = lines.size(); i-- > 0;) {
    if (lines[i].starts_with(k_faulthandler_start)) {
      start = i;
      break;
    }
  }
  std::string out;
  for (std::size_t i = start; i < lines.size(); ++i) {
    out += lines[i] + "\n";
  }
  return out;
}

class ToolStackCapture final : public StackCapture {
 public:
  ToolStackCapture(asio::io_context& ctx, Tool tool, WorkerIo& io, std::string temp_root)
      : ctx_(ctx), tool_(std::move(tool)), io_(io), temp_root_(std::move(temp_root)) {}

  asio::awaitable<StackReport> capture(std::vector<StackTarget> targets, std::string reason,
                                       std::chrono::milliseconds hold) override {
    const auto deadline = std::chrono::steady_clock::now() + k_capture_bound;
    std::vector<errors::RankStack> stacks;
    stacks.reserve(targets.size());
    for (const auto& t : targets) {
      stacks.push_back(errors::RankStack{t.ranks.rank, {}, proc_state(t.pid)});
    }
    if (hold.count() > 0) {
      co_await freeze(targets, hold);
    }
    std::vector<std::string> texts(targets.size());
    if (tool_.method == StackMethod::faulthandler) {
      co_await take_faulthandler_dumps(targets, texts, deadline);
    } else if (tool_.method != StackMethod::proc) {
      co_await run_tools(targets, texts, deadline);
    }
    for (std::size_t i = 0; i < targets.size(); ++i) {
      stacks[i].threads = parse_capture(tool_.method, texts[i]);
    }
    co_return report(targets, stacks, texts, std::move(reason));
  }

 private:
  /// SIGSTOP holds each worker where it is while the other nodes freeze theirs, so that no
  /// node's capture (faulthandler ends its workers) makes a collective elsewhere fail and
  /// unwind first. Python workers stay stopped until their SIGABRT (a pending signal is
  /// handled before the resumed process runs any code); the others resume for their tool.
  asio::awaitable<void> freeze(const std::vector<StackTarget>& targets,
                               std::chrono::milliseconds hold) {
    for (const auto& t : targets) {
      ::kill(t.pid, SIGSTOP);
    }
    asio::steady_timer timer(ctx_);
    co_await pause(timer, hold);
    if (tool_.method != StackMethod::faulthandler) {
      for (const auto& t : targets) {
        ::kill(t.pid, SIGCONT);
      }
    }
  }

  asio::awaitable<void> run_tools(const std::vector<StackTarget>& targets,
                                  std::vector<std::string>& texts,
                                  std::chrono::steady_clock::time_point deadline) {
    std::vector<std::pair<pid_t, int>> running(targets.size(), {0, -1});
    for (std::size_t i = 0; i < targets.size(); ++i) {
      auto started = start_tool(tool_argv(tool_, targets[i].pid));
      if (started) {
        running[i] = *started;
      } else {
        texts[i] = started.error().message + "\n";
      }
    }
    for (std::size_t i = 0; i < targets.size(); ++i) {
      if (running[i].second < 0) {
        continue;
      }
      auto output = co_await read_until(ctx_, running[i].second, deadline);
      texts[i] = std::move(output.text);
      if (!output.complete) {
        ::kill(running[i].first, SIGKILL);  // not reaped yet: it still holds the pipe open
        texts[i] += "\n(" + std::string(to_string(tool_.method)) + " ran out of time)\n";
      }
    }
  }

  asio::awaitable<void> take_faulthandler_dumps(const std::vector<StackTarget>& targets,
                                                std::vector<std::string>& texts,
                                                std::chrono::steady_clock::time_point deadline) {
    for (const auto& t : targets) {
      if (!t.keep_running) {
        const struct rlimit no_core {};
        (void)::prlimit(t.pid, RLIMIT_CORE, &no_core, nullptr);
        ::kill(t.pid, SIGABRT);
      }
      ::kill(t.pid, SIGCONT);  // frozen ones handle the SIGABRT first thing
    }
    // The dump is written before the worker dies of the signal; its children may keep the
    // pipe open, so the worker's death (not EOF) says the dump is complete.
    asio::steady_timer timer(ctx_);
    while (std::any_of(targets.begin(), targets.end(),
                       [](const auto& t) { return !t.keep_running && is_alive(t.pid); }) &&
           std::chrono::steady_clock::now() < deadline) {
      co_await pause(timer, k_poll_step);
    }
    co_await pause(timer, k_read_settle);  // the pipe readers take what the workers wrote
    for (std::size_t i = 0; i < targets.size(); ++i) {
      if (!targets[i].keep_running) {  // else: its /proc state
        texts[i] = dump_in(io_.stderr_lines(targets[i].ranks.local_rank, k_stack_dump_lines));
      }
    }
  }

  std::string stacks_dir(const StackTarget& t) {
    auto error_file = io_.error_file(t.ranks.local_rank);
    if (!error_file.empty()) {
      return error_file.substr(0, error_file.rfind('/'));
    }
    if (temp_dir_.empty()) {
      std::string pattern = temp_root_ + "/ddprun_stacks_XXXXXX";
      temp_dir_ = ::mkdtemp(pattern.data()) != nullptr ? pattern : "/tmp";
    }
    return temp_dir_ + "/" + std::to_string(t.ranks.local_rank);
  }

  std::string write_file(const StackTarget& t, const errors::RankStack& stack,
                         const std::string& text, const std::string& reason) {
    auto dir = stacks_dir(t);
    (void)::mkdir(dir.c_str(), 0700);
    auto path = dir + "/stacks.txt";
    std::ofstream out(path, std::ios::trunc);
    out << "# rank " << t.ranks.rank << " (local_rank " << t.ranks.local_rank << ", pid " << t.pid
        << "), taken with " << to_string(tool_.method) << " after " << reason << "\n"
        << "# process: " << stack.note << "\n"
        << text;
    if (!out) {
      spdlog::warn("cannot write {}", path);
    }
    return path;
  }

  StackReport report(const std::vector<StackTarget>& targets,
                     const std::vector<errors::RankStack>& stacks,
                     const std::vector<std::string>& texts, std::string reason) {
    StackReport r;
    r.reason = std::move(reason);
    r.method = std::string(to_string(tool_.method));
    r.groups = errors::group_stacks(stacks);
    for (std::size_t i = 0; i < targets.size(); ++i) {
      r.files.push_back(write_file(targets[i], stacks[i], texts[i], r.reason));
    }
    return r;
  }

  asio::io_context& ctx_;
  Tool tool_;
  WorkerIo& io_;
  std::string temp_root_;  ///< where temp_dir_ is made (output::temp_root of the agent's env)
  std::string temp_dir_;
};

}  // namespace

std::string_view to_string(StackMethod method) {
  switch (method) {
    case StackMethod::py_spy:
      return "py-spy";
    case StackMethod::faulthandler:
      return "faulthandler";
    case StackMethod::eu_stack:
      return "eu-stack";
    case StackMethod::gdb:
      return "gdb";
    case StackMethod::proc:
      break;
  }
  return "/proc";
}

std::unique_ptr<StackCapture> make_stack_capture(asio::io_context& ctx,
                                                 const config::WorkerCommand& command,
                                                 const util::Env& env, WorkerIo& io) {
  return std::make_unique<ToolStackCapture>(ctx, choose_tool(command, env), io,
                                            output::temp_root(env));
}

}  // namespace ddprun::agent
