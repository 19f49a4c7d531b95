// What a user switching from torchrun meets in the first hour (issue #24, items 3 to 5): the
// interpreter hint after an import failure, an endpoint held by a program that is not a store,
// the failure line before every restart (on the failing node and on its peers), the rendezvous
// hints on lines of their own and the --help epilogue.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "multinode_agents.hpp"
#include "support/subprocess.hpp"

using namespace ddprun::test;
using namespace ddprun::test::multinode;

namespace {

constexpr std::chrono::milliseconds k_short_run{30000};

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

std::string write_script(const std::string& dir, const std::string& name, const std::string& text,
                         bool executable) {
  auto path = dir + "/" + name;
  std::ofstream(path) << text;
  if (executable) {
    ::chmod(path.c_str(), 0755);
  }
  return path;
}

/// A launch under `env -i` with PATH as given, on a free master port (a single-node launch hosts
/// the workers' store there, and 29500 may be another test's).
RunResult launch(const std::string& path, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"/usr/bin/env",
                                "-i",
                                "PATH=" + path,
                                "HOME=/root",
                                "PET_MASTER_PORT=" + std::to_string(free_port()),
                                ddprun_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, RunOptions{{}, {}, "", k_short_run});
}

// A python3 first on PATH that cannot import torch (Debian's, without its site packages): the
// pyenv shim or venv python of a switching user.
TEST(FirstHourE2E, ATorchlessPython3FirstOnPathGetsTheInterpreterHint) {
  const auto dir = make_temp_dir("ddprun-hint-");
  const auto shim =
      write_script(dir, "python3", "#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n", true);
  const auto train = write_script(dir, "train.py", "import torch\nprint('trained')\n", false);
  const auto r = launch(dir + ":/usr/bin:/bin", {"--nproc_per_node", "2", train});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(
      r.err.find("The workers' Python could not import torch: they ran python3 (" + shim + ")."),
      std::string::npos)
      << r.err;
  for (const char* part :
       {"the first python3 on PATH", "--python /path/to/python3", "PYTHON_EXEC=/path/to/python3",
        "other python3 on PATH: /usr/bin/python3"}) {
    EXPECT_NE(r.err.find(part), std::string::npos) << part << " not in:\n" << r.err;
  }
  EXPECT_EQ(count(r.err, "could not import"), 1) << r.err;
}

// With the workers' stderr seen by the agent (--tee), the module is read from the traceback,
// whatever it is, and the interpreter given with --python is named as such.
TEST(FirstHourE2E, AnImportErrorInTheTracebackNamesItsModuleAndTheGivenInterpreter) {
  const auto dir = make_temp_dir("ddprun-hint-");
  const auto train = write_script(dir, "train.py", "import ddprun_no_such_module\n", false);
  const auto r = launch("/usr/bin:/bin", {"--nproc_per_node", "1", "--tee", "3", "--python",
                                          "/usr/bin/python3", train});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("could not import ddprun_no_such_module: they ran /usr/bin/python3."),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("It is given with --python."), std::string::npos) << r.err;
}

TEST(FirstHourE2E, AnEarlyFailureWithTorchPresentGetsNoHint) {
  if (!have_torch()) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch";
  }
  const auto dir = make_temp_dir("ddprun-hint-");
  const auto train = write_script(dir, "train.py", "raise SystemExit(1)\n", false);
  const auto r =
      launch("/usr/bin:/bin", {"--nproc_per_node", "1", "--python", "/usr/bin/python3", train});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err.find("could not import"), std::string::npos) << r.err;
}

/// A TCP listener on 127.0.0.1 that is not a store: it holds each connection silently, or
/// closes it at once. Stops with the test.
class Listener {
 public:
  explicit Listener(bool close_at_once) : close_(close_at_once) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);  // NOLINT: the sockets API
    ::listen(fd_, 16);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);  // NOLINT: the sockets API
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  ~Listener() {
    stop_ = true;
    thread_.join();
    for (int c : held_) {
      ::close(c);
    }
    ::close(fd_);
  }
  int port() const { return port_; }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) > 0) {
        const int c = ::accept(fd_, nullptr, nullptr);
        if (close_) {
          ::close(c);
        } else {
          held_.push_back(c);
        }
      }
    }
  }
  bool close_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<int> held_;
  std::thread thread_;
};

RunResult join_endpoint(int port, const std::string& nnodes) {
  return launch("/usr/bin:/bin", {"--nnodes", nnodes, "--nproc_per_node", "1", "--rdzv_backend",
                                  "c10d", "--rdzv_endpoint", "127.0.0.1:" + std::to_string(port),
                                  "--no_python", "/bin/true"});
}

TEST(FirstHourE2E, AnEndpointHeldByASilentProgramIsOneErrorNotAWait) {
  Listener silent(false);
  const auto r = join_endpoint(silent.port(), "2");
  EXPECT_FALSE(r.timed_out) << r.err;
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("127.0.0.1:" + std::to_string(silent.port())), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is not a TCPStore"), std::string::npos) << r.err;
  EXPECT_EQ(count(r.err, "ddprun: error: "), 1) << r.err;
  EXPECT_EQ(count(r.err, "\n  "), 0) << "one line, no continuation:\n" << r.err;
}

TEST(FirstHourE2E, AnEndpointThatClosesEveryConnectionIsOneErrorNotAWait) {
  Listener closer(true);
  const auto r = join_endpoint(closer.port(), "2");
  EXPECT_FALSE(r.timed_out) << r.err;
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("is not a TCPStore"), std::string::npos) << r.err;
}

// A TCPStore that is not an agent (here `ddprun store serve`) is still used as the job's store.
TEST(FirstHourE2E, ARealStoreOnTheEndpointIsUsedAsAnExternalStore) {
  const int port = free_port();
  Agents agents;
  const auto store = agents.start(
      {ddprun_bin(), "store", "serve", "--host", "127.0.0.1", "--port", std::to_string(port)});
  ASSERT_TRUE(eventually(
      [&] { return contains(agents.err(store) + agents.out(store), "store: serving on"); },
      k_short_run))
      << agents.err(store);
  const auto r = join_endpoint(port, "1");
  EXPECT_EQ(r.status, 0) << r.err;
  agents.signal(store, SIGTERM);
  EXPECT_EQ(agents.wait(store), 0);
}

TEST(FirstHourE2E, EveryFailureBeforeARestartSaysWhichRankHowAndWhere) {
  const auto r =
      launch("/usr/bin:/bin", {"--nproc_per_node", "2", "--max_restarts", "1", "--no_python",
                               "/bin/sh", "-c", "[ $LOCAL_RANK = 1 ] && exit 3; sleep 30"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(count(r.err, "failed (exitcode: 3) local_rank: 1 (pid: "), 2) << r.err;
  EXPECT_EQ(count(r.err, "rank 1 (local_rank 1, pid "), 2) << r.err;
  EXPECT_EQ(count(r.err, ": exit code 3"), 2) << r.err;
  const auto restart = r.err.find("Worker group FAILED. 1/1 attempts left");
  ASSERT_NE(restart, std::string::npos) << r.err;
  EXPECT_LT(r.err.find("failed (exitcode: 3)"), restart) << "the failure comes first:\n" << r.err;
}

TEST(FirstHourE2E, APeersFailureIsLoggedWithItsRankAndSignal) {
  const int port = free_port();
  const auto conf = k_fast_conf;
  const std::vector<std::string> work{
      "--max_restarts", "1",  "--no_python",
      "/bin/sh",        "-c", "[ $RANK = 1 ] && kill -SEGV $$$$; sleep 30"};
  Agents agents;
  const auto a = agents.start(
      concat(concat({"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=/root", ddprun_bin()},
                    c10d_flags("2", port, 1, loopback(0), conf)),
             work));
  const auto b = agents.start(
      concat(concat({"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=/root", ddprun_bin()},
                    c10d_flags("2", port, 1, loopback(1), conf)),
             work));
  EXPECT_EQ(agents.wait(a), 1) << agents.all_logs();
  EXPECT_EQ(agents.wait(b), 1) << agents.all_logs();
  const auto logs = agents.err(a) + agents.err(b);
  EXPECT_GE(count(logs, "killed by SIGSEGV (signal 11)"), 1) << logs;
  EXPECT_GE(count(logs, "reported a failed worker group (rank 1 failed (exitcode: -11, SIGSEGV))"),
            1)
      << "the peer says it at the default level:\n"
      << logs;
}

TEST(FirstHourE2E, TheRendezvousHintsAreIndentedLinesUnderAShortFirstLine) {
  const auto r = launch("/usr/bin:/bin", {"--nnodes", "2", "--nproc_per_node", "1", "--master_port",
                                          std::to_string(free_port()), "--rdzv_conf", "timeout=6",
                                          "--no_python", "/bin/true"});
  EXPECT_EQ(r.status, 1) << r.err;
  std::istringstream in(r.err);
  bool seen = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find("is incomplete after") != std::string::npos) {
      seen = true;
      EXPECT_LT(line.size(), 200U) << line;
      std::string next;
      ASSERT_TRUE(std::getline(in, next));
      EXPECT_EQ(next.rfind("  This agent is --node_rank 0 of 2", 0), 0U) << next;
    }
  }
  EXPECT_TRUE(seen) << r.err;
}

TEST(FirstHourE2E, HelpEndsWithSubcommandsExitStatusesAndExamples) {
  const auto r = run({ddprun_bin(), "--help"});
  EXPECT_EQ(r.status, 0);
  const auto subcommands = r.out.find("\nsubcommands:\n  ddprun status ");
  const auto statuses = r.out.find("\nexit status:\n  0 ");
  const auto examples = r.out.find("\nexamples:\n  ddprun ");
  ASSERT_NE(subcommands, std::string::npos) << r.out;
  ASSERT_NE(statuses, std::string::npos) << r.out;
  ASSERT_NE(examples, std::string::npos) << r.out;
  EXPECT_LT(r.out.rfind("  -h, --help"), subcommands) << "after the options";
  EXPECT_LT(subcommands, statuses);
  EXPECT_LT(statuses, examples);
  for (const char* part : {"\n  ddprun store ", "\n  1   ", "\n  2   ", "\n  3   "}) {
    EXPECT_NE(r.out.find(part, subcommands), std::string::npos) << part;
  }
}

}  // namespace
