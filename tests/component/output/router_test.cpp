// OutputRouter against real /bin/sh children forked here with the fds from prepare().
// Consoles are pipes owned by the test; every wait is bounded by a deadline.

#include "ddprun/output/router.hpp"

#include "ddprun/net/asio.hpp"
#include "ddprun/output/log_dir.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>

namespace ddprun::output {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr auto k_deadline = 60s;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Pipe {
  int r = -1;
  int w = -1;
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    r = fds[0];
    w = fds[1];
    ::fcntl(r, F_SETFL, O_NONBLOCK);
  }
  ~Pipe() {
    ::close(r);
    ::close(w);
  }
  // Appends what can be read now to `into`.
  void drain(std::string& into) const {
    char buf[65536];
    for (;;) {
      auto n = ::read(r, buf, sizeof buf);
      if (n <= 0) {
        return;
      }
      into.append(buf, static_cast<std::size_t>(n));
    }
  }
};

// Sum of N over every "[ddprun] dropped N bytes ... local rank R" note in the text (a
// note reports the drops since the previous one).
std::uint64_t noted_drops(const std::string& console, int local_rank, std::size_t* note_bytes) {
  const std::string head = "[ddprun] dropped ";
  const std::string tail =
      " bytes of console output from local rank " + std::to_string(local_rank) + "\n";
  std::uint64_t total = 0;
  *note_bytes = 0;
  for (auto pos = console.find(head); pos != std::string::npos; pos = console.find(head, pos)) {
    auto end = console.find(tail, pos);
    if (end == std::string::npos) {
      break;
    }
    total += std::stoull(console.substr(pos + head.size(), end - pos - head.size()));
    *note_bytes += end + tail.size() - pos;
    pos = end;
  }
  return total;
}

pid_t spawn_sh(const std::string& script, ChildStdio io) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    if (io.out_fd >= 0) {
      ::dup2(io.out_fd, STDOUT_FILENO);
    }
    if (io.err_fd >= 0) {
      ::dup2(io.err_fd, STDERR_FILENO);
    }
    (void)::signal(SIGPIPE, SIG_DFL);  // best effort: the child is about to exec
    ::execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

class RouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(::signal(SIGPIPE, SIG_IGN), SIG_ERR);
    char tmpl[] = "/tmp/ddprun_router_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto run = make_run_dir(dir_, "job", "/nonexistent/ddprun-temp-root");
    ASSERT_TRUE(run) << run.error().message;
    run_dir_ = *run;
    ASSERT_TRUE(prepare_attempt_dir(run_dir_, 0, 4));
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  RouterOptions options() {
    RouterOptions o;
    o.console_out_fd = out_.w;
    o.console_err_fd = err_.w;
    return o;
  }

  // Runs the loop until cond() holds; drains the console pipes unless told not to.
  bool run_until(asio::io_context& ctx, const std::function<bool()>& cond, bool drain = true) {
    auto guard = asio::make_work_guard(ctx);
    auto deadline = std::chrono::steady_clock::now() + k_deadline;
    while (!cond()) {
      if (std::chrono::steady_clock::now() > deadline) {
        return false;
      }
      ctx.restart();
      ctx.run_for(5ms);
      if (drain) {
        out_.drain(console_out_);
        err_.drain(console_err_);
      }
    }
    return true;
  }

  // Spawns and waits for the child and the drained pipes; returns the exit status.
  int run_worker(asio::io_context& ctx, OutputRouter& router, int local_rank,
                 const std::string& script, ChildStdio io, bool drain = true) {
    pid_t pid = spawn_sh(script, io);
    router.on_spawned(local_rank, pid);
    int status = -1;
    bool exited = false;
    bool drained = false;
    router.async_wait_drained(k_deadline, [&] { drained = true; });
    EXPECT_TRUE(run_until(
        ctx,
        [&] {
          if (!exited && ::waitpid(pid, &status, WNOHANG) == pid) {
            exited = true;
          }
          return exited && drained;
        },
        drain));
    return status;
  }

  Pipe out_;
  Pipe err_;
  std::string console_out_;
  std::string console_err_;
  std::string dir_;
  std::string run_dir_;
};

TEST_F(RouterTest, TeeWithPrefixWritesFilesAndPrefixedConsole) {
  asio::io_context ctx;
  OutputRouter router(ctx, options());
  auto paths = log_paths(run_dir_, 0, 1);
  auto io = router.prepare({"trainer", 3, 1}, {Route::tee, Route::tee}, paths);
  ASSERT_TRUE(io) << io.error().message;
  EXPECT_GE(io->out_fd, 0);
  EXPECT_GE(io->err_fd, 0);
  run_worker(ctx, router, 1,
             "echo out1; echo err1 >&2; echo out2; echo err2 >&2; printf partial >&2", *io);
  EXPECT_EQ(slurp(paths.stdout_log), "out1\nout2\n");
  EXPECT_EQ(slurp(paths.stderr_log), "err1\nerr2\npartial");
  EXPECT_EQ(console_out_, "[trainer1]:out1\n[trainer1]:out2\n");
  EXPECT_EQ(console_err_, "[trainer1]:err1\n[trainer1]:err2\n[trainer1]:partial\n");
  EXPECT_EQ(router.tail_lines(1, 2), (std::vector<std::string>{"err2", "partial"}));
  EXPECT_EQ(router.console_dropped_bytes(1), 0U);
}

TEST_F(RouterTest, TwoWorkersShareTheConsoleAndOnlyTheShownRankReachesIt) {
  asio::io_context ctx;
  OutputRouter router(ctx, options());
  // -t 3 --local-ranks-filter 0: rank 1 keeps its files but is not tailed.
  const std::string script = "for i in 1 2 3; do echo out$i; echo err$i >&2; done; printf tail >&2";
  std::vector<pid_t> pids;
  for (int lr : {0, 1}) {
    auto plan = lr == 0 ? WorkerStdioPlan{Route::tee, Route::tee}
                        : WorkerStdioPlan{Route::file_only, Route::file_only};
    auto io = router.prepare({"default", lr, lr}, plan, log_paths(run_dir_, 0, lr));
    ASSERT_TRUE(io) << io.error().message;
    pids.push_back(spawn_sh(script, *io));
    router.on_spawned(lr);
  }
  bool drained = false;
  router.async_wait_drained(k_deadline, [&] { drained = true; });
  std::size_t reaped = 0;
  EXPECT_TRUE(run_until(ctx, [&] {
    for (auto& pid : pids) {
      if (pid > 0 && ::waitpid(pid, nullptr, WNOHANG) == pid) {
        pid = 0;
        ++reaped;
      }
    }
    return reaped == pids.size() && drained;
  }));
  for (int lr : {0, 1}) {
    EXPECT_EQ(slurp(log_paths(run_dir_, 0, lr).stdout_log), "out1\nout2\nout3\n");
    EXPECT_EQ(slurp(log_paths(run_dir_, 0, lr).stderr_log), "err1\nerr2\nerr3\ntail");
  }
  EXPECT_EQ(console_out_, "[default0]:out1\n[default0]:out2\n[default0]:out3\n");
  EXPECT_EQ(console_err_, "[default0]:err1\n[default0]:err2\n[default0]:err3\n[default0]:tail\n");
  EXPECT_EQ(router.tail_lines(1, 2), (std::vector<std::string>{"err3", "tail"}));
}

TEST_F(RouterTest, CustomPrefixTemplateUsesGlobalRank) {
  asio::io_context ctx;
  auto o = options();
  o.prefix_template = "[${rank} ${pid}]: ";
  OutputRouter router(ctx, o);
  auto io = router.prepare({"default", 5, 0}, {Route::console_prefixed, Route::inherit}, {});
  ASSERT_TRUE(io);
  EXPECT_EQ(io->err_fd, -1);
  run_worker(ctx, router, 0, "echo $$", *io);
  std::smatch m;
  ASSERT_TRUE(std::regex_match(console_out_, m, std::regex(R"(\[5 ([0-9]+)\]: ([0-9]+)\n)")))
      << console_out_;
  EXPECT_EQ(m[1].str(), m[2].str()) << "${pid} is the worker's pid";
}

TEST_F(RouterTest, PassThroughShowsStderrUnprefixedAndKeepsItsTail) {
  asio::io_context ctx;
  auto o = options();
  o.prefix_template = "[${rank}]: ";
  OutputRouter router(ctx, o);
  auto io = router.prepare({"default", 5, 0}, {Route::inherit, Route::pass_through}, {});
  ASSERT_TRUE(io);
  EXPECT_EQ(io->out_fd, -1);
  run_worker(ctx, router, 0, "echo one >&2; echo two >&2", *io);
  EXPECT_EQ(console_err_, "one\ntwo\n");
  EXPECT_EQ(router.tail_lines(0, 5), (std::vector<std::string>{"one", "two"}));
}

TEST_F(RouterTest, RedirectGivesTheChildTheFileItselfAndPrintsNothing) {
  asio::io_context ctx;
  OutputRouter router(ctx, options());
  auto paths = log_paths(run_dir_, 0, 0);
  auto io = router.prepare({"default", 0, 0}, {Route::file_only, Route::file_only}, paths);
  ASSERT_TRUE(io);
  run_worker(ctx, router, 0, "echo o; echo e >&2; echo last-err >&2", *io);
  EXPECT_EQ(slurp(paths.stdout_log), "o\n");
  EXPECT_EQ(slurp(paths.stderr_log), "e\nlast-err\n");
  EXPECT_EQ(console_out_ + console_err_, "");
  EXPECT_EQ(router.tail_lines(0, 1), (std::vector<std::string>{"last-err"}));
}

TEST_F(RouterTest, FilteredRankMixesFileAndDevNull) {
  asio::io_context ctx;
  OutputRouter router(ctx, options());
  auto paths = log_paths(run_dir_, 0, 2);
  auto io = router.prepare({"default", 2, 2}, {Route::devnull, Route::file_only}, paths);
  ASSERT_TRUE(io);
  run_worker(ctx, router, 2, "echo hidden; echo kept >&2", *io);
  EXPECT_FALSE(fs::exists(paths.stdout_log));
  EXPECT_EQ(slurp(paths.stderr_log), "kept\n");
  EXPECT_EQ(console_out_ + console_err_, "");
}

TEST_F(RouterTest, WatchedStreamsKeepTheirDestinationsAndNoteTheLastOutput) {
  // --stall-timeout: file_only becomes file_piped and devnull discard; both are read.
  asio::io_context ctx;
  OutputRouter router(ctx, options());
  EXPECT_EQ(router.last_output(), std::chrono::steady_clock::time_point{});
  auto paths = log_paths(run_dir_, 0, 1);
  auto plan = watched({Route::devnull, Route::file_only});
  EXPECT_EQ(plan, (WorkerStdioPlan{Route::discard, Route::file_piped}));
  auto io = router.prepare({"default", 1, 1}, plan, paths);
  ASSERT_TRUE(io);
  EXPECT_GE(io->out_fd, 0);
  EXPECT_GE(io->err_fd, 0);
  const auto before = std::chrono::steady_clock::now();
  run_worker(ctx, router, 1, "echo hidden; echo kept >&2; echo last-err >&2", *io);
  EXPECT_GE(router.last_output(), before);
  EXPECT_FALSE(fs::exists(paths.stdout_log));
  EXPECT_EQ(slurp(paths.stderr_log), "kept\nlast-err\n");
  EXPECT_EQ(console_out_ + console_err_, "");
  EXPECT_EQ(router.tail_lines(1, 1), (std::vector<std::string>{"last-err"}));
}

TEST_F(RouterTest, WatchedInheritIsTheSameConsoleWithWholeLinesAndProgressBars) {
  // Two unbuffered workers writing a line in pieces: no line is cut by the other's; '\r'
  // progress updates and a last line without '\n' come through as written.
  asio::io_context ctx;
  OutputRouter router(ctx, options());
  const auto plan = watched({Route::inherit, Route::inherit});
  EXPECT_EQ(plan, (WorkerStdioPlan{Route::pass_through, Route::pass_through}));
  auto a = router.prepare({"default", 0, 0}, plan, {});
  auto b = router.prepare({"default", 1, 1}, plan, {});
  ASSERT_TRUE(a && b);
  pid_t pa = spawn_sh(
      "printf 'rank 0 '; sleep 0.02; printf 'sum 2\n'; printf '\r10%%\r50%%'; "
      "sleep 0.2; printf '\r100%%\nend'",
      *a);
  router.on_spawned(0);
  pid_t pb = spawn_sh("sleep 0.01; printf 'rank 1 '; sleep 0.02; printf 'sum 2\n'", *b);
  router.on_spawned(1);
  bool drained = false;
  router.async_wait_drained(k_deadline, [&] { drained = true; });
  ASSERT_TRUE(run_until(ctx, [&] { return drained; }));
  ::waitpid(pa, nullptr, 0);
  ::waitpid(pb, nullptr, 0);
  EXPECT_NE(console_out_.find("rank 0 sum 2\n"), std::string::npos) << console_out_;
  EXPECT_NE(console_out_.find("rank 1 sum 2\n"), std::string::npos) << console_out_;
  EXPECT_NE(console_out_.find("\r10%\r"), std::string::npos) << console_out_;
  EXPECT_TRUE(console_out_.ends_with("50%\r100%\nend")) << console_out_;
}

TEST_F(RouterTest, VeryLongLineIsSplitNotDropped) {
  asio::io_context ctx;
  auto o = options();
  o.max_line_bytes = 1000;
  OutputRouter router(ctx, o);
  auto paths = log_paths(run_dir_, 0, 0);
  auto io = router.prepare({"default", 0, 0}, {Route::tee, Route::inherit}, paths);
  ASSERT_TRUE(io);
  run_worker(ctx, router, 0, "head -c 2500 /dev/zero | tr '\\0' x; echo", *io);
  EXPECT_EQ(slurp(paths.stdout_log), std::string(2500, 'x') + "\n");
  EXPECT_EQ(console_out_, "[default0]:" + std::string(1000, 'x') +
                              "\n[default0]:" + std::string(1000, 'x') +
                              "\n[default0]:" + std::string(500, 'x') + "\n");
}

TEST_F(RouterTest, FastWriterIsNotSlowedByAStuckConsole) {
  constexpr std::size_t k_total = 100 * 1024 * 1024;
  asio::io_context ctx;
  auto o = options();
  o.console_buffer_bytes = 256 * 1024;
  OutputRouter router(ctx, o);
  auto paths = log_paths(run_dir_, 0, 0);
  auto io = router.prepare({"default", 0, 0}, {Route::tee, Route::inherit}, paths);
  ASSERT_TRUE(io);
  // Nobody reads the console pipe while the worker writes.
  int status =
      run_worker(ctx, router, 0,
                 "yes 'a line of worker output 0123456789' | head -c " + std::to_string(k_total),
                 *io, /*drain=*/false);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(fs::file_size(paths.stdout_log), k_total);
  EXPECT_EQ(router.file_error_bytes(0), 0U);
  const auto dropped = router.console_dropped_bytes(0);
  EXPECT_GT(dropped, 0U);
  // Once the console is read again, the drops are reported on it.
  std::size_t note_bytes = 0;
  EXPECT_TRUE(run_until(ctx, [&] { return noted_drops(console_out_, 0, &note_bytes) == dropped; }));
  constexpr std::size_t k_line = 35;    // "a line of worker output 0123456789\n"
  constexpr std::size_t k_prefix = 11;  // "[default0]:"
  const std::size_t lines = (k_total + k_line - 1) / k_line;
  const std::size_t added_newline = k_total % k_line != 0 ? 1 : 0;  // partial last line
  EXPECT_EQ(console_out_.size() - note_bytes + dropped, k_total + lines * k_prefix + added_newline)
      << "every line is either shown with its prefix or counted as dropped";
}

TEST_F(RouterTest, SocketConsoleIsWrittenWithoutBlocking) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  ::fcntl(sv[0], F_SETFL, O_NONBLOCK);
  asio::io_context ctx;
  auto o = options();
  o.console_out_fd = sv[1];
  o.console_buffer_bytes = 64 * 1024;
  std::string seen;
  {
    OutputRouter router(ctx, o);
    auto io = router.prepare({"default", 0, 0}, {Route::console_prefixed, Route::inherit}, {});
    ASSERT_TRUE(io);
    // 8 MiB through a socket nobody reads yet: the router must keep up and count drops.
    run_worker(ctx, router, 0, "yes 0123456789 | head -c 8388608", *io);
    const auto dropped = router.console_dropped_bytes(0);
    EXPECT_GT(dropped, 0U);
    std::size_t note_bytes = 0;
    EXPECT_TRUE(run_until(ctx, [&] {
      char buf[65536];
      for (ssize_t n; (n = ::read(sv[0], buf, sizeof buf)) > 0;) {
        seen.append(buf, static_cast<std::size_t>(n));
      }
      return noted_drops(seen, 0, &note_bytes) == dropped;
    }));
    constexpr std::size_t k_total = 8388608;
    constexpr std::size_t k_lines = (k_total + 10) / 11;  // "0123456789\n", last one partial
    EXPECT_EQ(seen.size() - note_bytes + dropped, k_total + k_lines * 11 + 1);
  }
  EXPECT_EQ(seen.rfind("[default0]:0123456789\n", 0), 0U);
  ::close(sv[0]);
  ::close(sv[1]);
}

TEST_F(RouterTest, DrainWaitGivesUpOnAPipeHeldByAGrandchild) {
  asio::io_context ctx;
  OutputRouter router(ctx, options());
  auto io = router.prepare({"default", 0, 0}, {Route::console_prefixed, Route::inherit}, {});
  ASSERT_TRUE(io);
  pid_t pid = spawn_sh("echo started; sleep 30 & exit 0", *io);
  router.on_spawned(0);
  bool done = false;
  router.async_wait_drained(50ms, [&] { done = true; });
  EXPECT_TRUE(run_until(ctx, [&] { return done; }));
  EXPECT_FALSE(router.drained());
  ::kill(-pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  EXPECT_TRUE(run_until(ctx, [&] { return router.drained(); }));
  EXPECT_EQ(console_out_, "[default0]:started\n");
}

TEST_F(RouterTest, ResetFlushesPartialLinesAndForgetsWorkers) {
  asio::io_context ctx;
  OutputRouter router(ctx, options());
  auto io = router.prepare({"default", 0, 0}, {Route::console_prefixed, Route::inherit}, {});
  ASSERT_TRUE(io);
  pid_t pid = spawn_sh("printf 'no newline'; exec sleep 30", *io);
  router.on_spawned(0);
  EXPECT_TRUE(run_until(ctx, [&] {
    return slurp("/proc/" + std::to_string(pid) + "/cmdline").rfind("sleep", 0) == 0;
  }));
  router.reset();
  EXPECT_TRUE(run_until(ctx, [&] { return console_out_ == "[default0]:no newline\n"; }));
  EXPECT_TRUE(router.drained());
  EXPECT_TRUE(router.tail_lines(0, 5).empty());
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

TEST_F(RouterTest, FullDiskIsCountedAndReportedWhileConsoleGoesOn) {
  asio::io_context ctx;
  OutputRouter router(ctx, options());
  LogPaths paths;
  paths.stdout_log = "/dev/full";  // every write fails with ENOSPC
  auto io = router.prepare({"default", 0, 0}, {Route::tee, Route::inherit}, paths);
  ASSERT_TRUE(io) << io.error().message;
  run_worker(ctx, router, 0, "echo one; echo two", *io);
  EXPECT_EQ(router.file_error_bytes(0), 8U);
  EXPECT_EQ(console_out_, "[default0]:one\n[default0]:two\n");
  EXPECT_TRUE(run_until(ctx, [&] {
    return console_err_ ==
           "[ddprun] could not write 8 bytes to /dev/full (No space left on device)\n";
  })) << console_err_;
}

TEST_F(RouterTest, PrepareFailsWithPathWhenLogDirIsMissing) {
  asio::io_context ctx;
  OutputRouter router(ctx, options());
  auto paths = log_paths(run_dir_, 7, 0);  // attempt_7 was never prepared
  auto io = router.prepare({"default", 0, 0}, {Route::tee, Route::inherit}, paths);
  ASSERT_FALSE(io);
  EXPECT_NE(io.error().message.find(paths.stdout_log), std::string::npos);
}

}  // namespace
}  // namespace ddprun::output
