#include "ddprun/process/exit_info.hpp"
#include "ddprun/process/posix_launcher.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "support/subprocess.hpp"

using namespace ddprun;
using namespace ddprun::process;

namespace {

SpawnRequest sh(const std::string& script) {
  return SpawnRequest{{"/bin/sh", "-c", script}, {"PATH=/usr/bin:/bin"}, "", -1, -1, {}};
}

ExitInfo wait_exit(pid_t pid) {
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return decode_wait_status(status);
}

}  // namespace

TEST(PosixLauncher, RunsChildInItsOwnProcessGroup) {
  PosixLauncher launcher;
  auto pid = launcher.spawn(sh("[ $(ps -o pgid= -p $$) -eq $$ ] && exit 7; exit 1"));
  ASSERT_TRUE(pid) << pid.error().message;
  EXPECT_EQ(wait_exit(*pid).code(), 7);
}

TEST(PosixLauncher, PassesExactlyTheGivenEnvironment) {
  PosixLauncher launcher;
  auto dir = test::make_temp_dir("ddprun-launch-");
  auto req = sh("env > " + dir + "/env");
  req.env = {"PATH=/usr/bin:/bin", "ONLY=this"};
  auto pid = launcher.spawn(req);
  ASSERT_TRUE(pid);
  EXPECT_TRUE(wait_exit(*pid).success());
  auto env = test::read_file(dir + "/env");
  EXPECT_NE(env.find("ONLY=this\n"), std::string::npos);
  EXPECT_EQ(env.find("HOME="), std::string::npos);
}

TEST(PosixLauncher, RedirectsStdoutAndClosesOtherFds) {
  PosixLauncher launcher;
  auto dir = test::make_temp_dir("ddprun-launch-");
  int out = open((dir + "/out").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  int leak = open("/dev/null", O_RDONLY);  // not CLOEXEC: the child must still not see it
  auto req = sh("echo hello; ls /proc/self/fd | wc -l");
  req.stdout_fd = out;
  auto pid = launcher.spawn(req);
  close(out);
  close(leak);
  ASSERT_TRUE(pid);
  EXPECT_TRUE(wait_exit(*pid).success());
  // hello, then the fd count: 0,1,2 plus the one ls opens to read /proc/self/fd.
  EXPECT_EQ(test::read_file(dir + "/out"), "hello\n4\n");
}

TEST(PosixLauncher, MissingProgramIsAClearError) {
  PosixLauncher launcher;
  auto r = launcher.spawn(SpawnRequest{{"/nonexistent/train.sh"}, {}, "", -1, -1, {}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "cannot execute '/nonexistent/train.sh': No such file or directory (errno 2)");
  auto in_path =
      launcher.spawn(SpawnRequest{{"no-such-program-xyz"}, {"PATH=/bin"}, "", -1, -1, {}});
  ASSERT_FALSE(in_path);
  EXPECT_NE(in_path.error().message.find("not found in PATH=/bin"), std::string::npos);
}

TEST(PosixLauncher, NonExecutableFileReportsPermissionDenied) {
  PosixLauncher launcher;
  auto dir = test::make_temp_dir("ddprun-launch-");
  auto path = dir + "/script.sh";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT, 0644);
  close(fd);
  auto r = launcher.spawn(SpawnRequest{{path}, {}, "", -1, -1, {}});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("Permission denied (errno 13)"), std::string::npos);
}

TEST(PosixLauncher, SignalGroupReachesGrandchildren) {
  PosixLauncher launcher;
  auto pid = launcher.spawn(sh("sleep 60 & sleep 60 & wait"));
  ASSERT_TRUE(pid);
  ASSERT_TRUE(test::eventually([&] { return group_alive(*pid); }, std::chrono::seconds(5)));
  EXPECT_TRUE(launcher.signal_group(*pid, SIGKILL));
  EXPECT_EQ(wait_exit(*pid).signal, SIGKILL);
  EXPECT_TRUE(test::eventually(
      [&] {
        reap_exited();
        return !group_alive(*pid);
      },
      std::chrono::seconds(5)));
  EXPECT_FALSE(launcher.signal_group(1, SIGTERM));  // refuses init's group
}

TEST(PosixLauncher, ResetsIgnoredSignalsInTheChild) {
  PosixLauncher launcher;
  ASSERT_NE(std::signal(SIGTERM, SIG_IGN), SIG_ERR);
  auto pid = launcher.spawn(sh("kill -TERM $$; sleep 5"));
  ASSERT_NE(std::signal(SIGTERM, SIG_DFL), SIG_ERR);
  ASSERT_TRUE(pid);
  EXPECT_EQ(wait_exit(*pid).signal, SIGTERM);
}

TEST(DecodeWaitStatus, RealSignalDeath) {
  PosixLauncher launcher;
  auto pid = launcher.spawn(sh("kill -SEGV $$"));
  ASSERT_TRUE(pid);
  EXPECT_EQ(wait_exit(*pid).code(), -SIGSEGV);
}
