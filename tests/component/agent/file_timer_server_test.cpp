// FileTimerServer over a real FIFO in a temp directory, on a real io_context: lines written
// the way torch's FileTimerClient writes them (open O_WRONLY|O_NONBLOCK, one line, close).
// Every wait is bounded; no assertion is about how long anything took.

#include "ddprun/agent/file_timer_server.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace ddprun::agent {
namespace {

using namespace std::chrono_literals;

double epoch_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string request(pid_t pid, const std::string& scope, double expiration, int sig = SIGKILL) {
  return R"({"version": 1, "pid": )" + std::to_string(pid) + R"(, "scope_id": ")" + scope +
         R"(", "expiration_time": )" + std::to_string(expiration) + R"(, "signal": )" +
         std::to_string(sig) + "}\n";
}

bool is_fifo(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

class FileTimerServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/ddprun_timer_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { ::rmdir(dir_.c_str()); }

  void write_line(const std::string& path, const std::string& line) {
    int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
    ASSERT_GE(fd, 0) << "open " << path;
    ASSERT_EQ(::write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size()));
    ::close(fd);
  }

  /// Runs the loop until `done` holds, at most 10 s.
  template <typename Pred>
  bool run_until(Pred done) {
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      ctx_.run_for(20ms);
      ctx_.restart();
    }
    return done();
  }

  asio::io_context ctx_{1};
  util::SystemClock clock_;
  std::string dir_;
  std::vector<TimerExpiry> fired_;
};

TEST_F(FileTimerServerTest, ExpiredTimerIsReportedAndTheFifoGoesAtStop) {
  FileTimerServer server(ctx_, clock_, dir_ + "/timer", "");
  auto path = server.start([this](const TimerExpiry& e) { fired_.push_back(e); });
  ASSERT_TRUE(path) << path.error().message;
  EXPECT_TRUE(is_fifo(*path));
  write_line(*path, request(4242, "step", epoch_now() + 0.2, SIGKILL));
  ASSERT_TRUE(run_until([&] { return !fired_.empty(); })) << "the timer never fired";
  ASSERT_EQ(fired_.size(), 1U);
  EXPECT_EQ(fired_[0].pid, 4242);
  EXPECT_EQ(fired_[0].signal, SIGKILL);
  EXPECT_EQ(fired_[0].scope_id, "step");
  server.stop();
  EXPECT_FALSE(is_fifo(*path));
  EXPECT_NE(::access(path->c_str(), F_OK), 0);
}

TEST_F(FileTimerServerTest, ReleasedTimerNeverFiresAndGarbageIsSkipped) {
  FileTimerServer server(ctx_, clock_, "", dir_);
  auto path = server.start([this](const TimerExpiry& e) { fired_.push_back(e); });
  ASSERT_TRUE(path) << path.error().message;
  EXPECT_EQ(path->rfind(dir_ + "/watchdog_timer_", 0), 0U) << *path;
  const double now = epoch_now();
  write_line(*path, "this is not json\n");
  write_line(*path, request(11, "released", now + 0.2));
  write_line(*path, request(11, "released", -1, 0));
  write_line(*path, request(12, "kept", now + 0.5, SIGTERM));
  // "released" would expire first: once "kept" fired, it is known never to fire.
  ASSERT_TRUE(run_until([&] { return !fired_.empty(); })) << "no timer fired";
  ctx_.run_for(50ms);
  ASSERT_EQ(fired_.size(), 1U);
  EXPECT_EQ(fired_[0].pid, 12);
  EXPECT_EQ(fired_[0].signal, SIGTERM);
  server.stop();
}

TEST_F(FileTimerServerTest, ForgottenPidsTimersDoNotFireAndRequestsCountAsProgress) {
  FileTimerServer server(ctx_, clock_, dir_ + "/timer", "");
  EXPECT_EQ(server.last_request(), ddprun::util::SteadyTime{});
  auto path = server.start([this](const TimerExpiry& e) { fired_.push_back(e); });
  ASSERT_TRUE(path) << path.error().message;
  const double now = epoch_now();
  write_line(*path, request(21, "dead", now + 0.2));
  write_line(*path, request(22, "alive", now + 0.5));
  const auto before = std::chrono::steady_clock::now();
  ASSERT_TRUE(run_until([&] { return server.last_request() >= before; })) << "requests not read";
  server.forget(21);  // pid 21 exited
  ASSERT_TRUE(run_until([&] { return !fired_.empty(); })) << "no timer fired";
  ASSERT_EQ(fired_.size(), 1U);
  EXPECT_EQ(fired_[0].pid, 22);
  server.stop();
}

TEST_F(FileTimerServerTest, ExistingFileIsReplacedAndAMissingDirectoryIsAnError) {
  const std::string path = dir_ + "/timer";
  std::ofstream(path) << "stale";
  FileTimerServer server(ctx_, clock_, path, "");
  auto started = server.start([](const TimerExpiry&) {});
  ASSERT_TRUE(started) << started.error().message;
  EXPECT_TRUE(is_fifo(path));
  server.stop();

  FileTimerServer bad(ctx_, clock_, dir_ + "/missing/timer", "");
  auto failed = bad.start([](const TimerExpiry&) {});
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message.find("mkfifo(" + dir_ + "/missing/timer)"), std::string::npos)
      << failed.error().message;
}

TEST(FileTimerServerFactory, OnlyEnabledByTheEnvironment) {
  asio::io_context ctx;
  util::SystemClock clock;
  EXPECT_EQ(make_file_timer_server(ctx, clock, util::Env{}), nullptr);
  util::Env only_file;
  only_file.set("TORCHELASTIC_TIMER_FILE", "/tmp/x");
  EXPECT_EQ(make_file_timer_server(ctx, clock, only_file), nullptr);
  util::Env not_one;
  not_one.set("TORCHELASTIC_ENABLE_FILE_TIMER", "true");  // torchrun wants exactly "1"
  EXPECT_EQ(make_file_timer_server(ctx, clock, not_one), nullptr);
  util::Env enabled;
  enabled.set("TORCHELASTIC_ENABLE_FILE_TIMER", "1");
  EXPECT_NE(make_file_timer_server(ctx, clock, enabled), nullptr);
}

}  // namespace
}  // namespace ddprun::agent
