// End-to-end tests of the ddprun binary on one node: what a torchrun user would check.

#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

#include "support/subprocess.hpp"

using namespace ddprun::test;
namespace fs = std::filesystem;

namespace {

std::string worker(const std::string& name) { return source_path("tests/support/workers/" + name); }

/// Runs ddprun under `env -i` with a minimal environment, as the spec's capture did.
RunResult run_clean(const std::vector<std::string>& args, const std::string& tag = "X=1") {
  std::vector<std::string> argv{
      "/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=/root",
      "FOO=bar",      tag,  ddprun_bin(),         "--master_port=" + std::to_string(free_port())};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, RunOptions{{}, {}, "", std::chrono::seconds(60)});
}

}  // namespace

// torch >= 2.2 warns about NCCL_ASYNC_ERROR_HANDLING from every rank: its workers get only the
// new name, as from torchrun 2.6 (the version given here as the documented override).
TEST(LauncherE2E, Torch2WorkersGetOnlyTheNewNcclName) {
  auto dir = make_temp_dir("ddprun-env-");
  auto r =
      run_clean({"--standalone", "--nproc_per_node=1", "--no_python", worker("envdump.sh"), dir},
                "DDPRUN_WORKER_TORCH=2.6");
  ASSERT_EQ(r.status, 0) << r.err;
  auto env = parse_env_file(dir + "/env_0.txt");
  EXPECT_EQ(env["TORCH_NCCL_ASYNC_ERROR_HANDLING"], "1");
  EXPECT_EQ(env.count("NCCL_ASYNC_ERROR_HANDLING"), 0U);
}

/// Python's socket.getfqdn() on this machine: what torchrun gives a one-node job as MASTER_ADDR.
std::string python_fqdn() {
  auto r = run({"/usr/bin/python3", "-c", "import socket; print(socket.getfqdn())"});
  return r.out.empty() ? "?" : r.out.substr(0, r.out.find('\n'));
}

/// A capture of tests/e2e/torchrun_env/ (capture.sh): each rank's variables, marks included.
std::vector<std::map<std::string, std::string>> read_capture(const std::string& file) {
  std::vector<std::map<std::string, std::string>> ranks;
  std::istringstream in(read_file(source_path("tests/e2e/torchrun_env/" + file)));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# rank", 0) == 0) {
      ranks.emplace_back();
    } else if (auto eq = line.find('='); eq != std::string::npos && !ranks.empty()) {
      ranks.back()[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  return ranks;
}

// What ddprun gives each worker equals what the torchrun of the workers' torch gives it:
// `--standalone --nproc_per_node 2` captured from torchrun 1.13 (Debian 12), 2.6 (Debian 13)
// and 2.14 (Debian forky) under the same clean environment, the workers' torch named by
// DDPRUN_WORKER_TORCH. Marked values are checked for their shape; <fqdn> is Python's
// socket.getfqdn() here.
TEST(LauncherE2E, WorkerEnvironmentEqualsTorchrunsForEachTorch) {
  const std::string fqdn = python_fqdn();
  const std::regex uuid4("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  for (const std::string torch : {"1.13", "2.6", "2.14"}) {
    SCOPED_TRACE("torch " + torch);
    const auto capture = read_capture("torch-" + torch + ".env");
    ASSERT_EQ(capture.size(), 2U);
    const auto dir = make_temp_dir("ddprun-env-");
    auto r = run({"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=/root", "LANG=C.UTF-8",
                  "FOO=bar", "DDPRUN_WORKER_TORCH=" + torch, ddprun_bin(), "--standalone",
                  "--nproc_per_node", "2", "--no_python", worker("envdump.sh"), dir},
                 RunOptions{{}, {}, "", std::chrono::seconds(60)});
    ASSERT_EQ(r.status, 0) << r.err;
    std::string port;
    for (std::size_t rank = 0; rank < 2; ++rank) {
      auto env = parse_env_file(dir + "/env_" + std::to_string(rank) + ".txt");
      for (const char* not_compared : {"PWD", "OLDPWD", "SHLVL", "_", "DDPRUN_WORKER_TORCH"}) {
        env.erase(not_compared);
      }
      auto expected = capture[rank];
      EXPECT_EQ(expected["MASTER_PORT"], "<port>");
      EXPECT_TRUE(std::regex_match(env["MASTER_PORT"], std::regex("[1-9][0-9]*")));
      EXPECT_TRUE(port.empty() || env["MASTER_PORT"] == port) << "one port for every rank";
      port = env["MASTER_PORT"];
      EXPECT_EQ(expected["TORCHELASTIC_RUN_ID"], "<run id>");
      EXPECT_TRUE(std::regex_match(env["TORCHELASTIC_RUN_ID"], uuid4));
      EXPECT_EQ(expected["TORCHELASTIC_ERROR_FILE"],
                "<error file of rank " + std::to_string(rank) + ">");
      EXPECT_TRUE(std::regex_match(
          env["TORCHELASTIC_ERROR_FILE"],
          std::regex(".*/torchelastic_[^/]+/" + env["TORCHELASTIC_RUN_ID"] + "_[^/]+/attempt_0/" +
                     std::to_string(rank) + "/error\\.json")))
          << env["TORCHELASTIC_ERROR_FILE"];
      for (const char* checked :
           {"MASTER_PORT", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_ERROR_FILE"}) {
        expected.erase(checked);
        env.erase(checked);
      }
      if (expected["MASTER_ADDR"] == "<fqdn>") {
        expected["MASTER_ADDR"] = fqdn;
      }
      EXPECT_EQ(env, expected) << "rank " << rank;
    }
  }
}

TEST(LauncherE2E, StaticDefaultsUseMasterAddrAndPort) {
  auto dir = make_temp_dir("ddprun-env-");
  auto r = run_clean(
      {"--nproc_per_node=1", "--master_port=29517", "--no_python", worker("envdump.sh"), dir});
  ASSERT_EQ(r.status, 0) << r.err;
  auto env = parse_env_file(dir + "/env_0.txt");
  EXPECT_EQ(env["MASTER_ADDR"], "127.0.0.1");
  EXPECT_EQ(env["MASTER_PORT"], "29517");
  EXPECT_EQ(env["TORCHELASTIC_RUN_ID"], "none");
  EXPECT_EQ(env["TORCHELASTIC_USE_AGENT_STORE"], "True");  // the agent hosts the workers' store
  EXPECT_EQ(env.count("OMP_NUM_THREADS"), 0u);             // one worker: torchrun leaves it unset
}

TEST(LauncherE2E, RestartsExactlyMaxRestartsThenExitsOne) {
  auto dir = make_temp_dir("ddprun-restart-");
  auto port = std::to_string(free_port());
  auto r = run_clean({"--nproc_per_node=2", "--max_restarts=2", "--master_port", port,
                      "--no_python", worker("attempts.sh"), dir, "1", "7"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(read_file(dir + "/rank_1.log"), "attempt=0 rank=1 port=" + port +
                                                "\nattempt=1 rank=1 port=" + port +
                                                "\nattempt=2 rank=1 port=" + port + "\n");
  EXPECT_NE(r.err.find("Worker group FAILED. 2/2 attempts left"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Worker group FAILED. 1/2 attempts left"), std::string::npos);
  EXPECT_EQ(r.err.find("0/2 attempts left"), std::string::npos);
  EXPECT_NE(r.err.find("exitcode  : 7"), std::string::npos) << r.err;
}

TEST(LauncherE2E, SuccessExitsZero) {
  auto r = run_clean({"--nproc_per_node=3", "--no_python", "/bin/sh", "-c", "exit 0"});
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(LauncherE2E, ArgsAfterTheScriptReachTheWorkerUntouched) {
  auto r = run_clean({"--nproc_per_node=1", "--no_python", "/bin/echo", "--nproc_per_node=5",
                      "lr=${local_rank}", "$$x"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "--nproc_per_node=5 lr=0 $x\n");
}

TEST(LauncherE2E, SigtermLeavesNoProcessBehind) {
  auto dir = make_temp_dir("ddprun-term-");
  auto tag = unique_tag();
  auto bg = start({"/usr/bin/env", tag, ddprun_bin(), "--nproc_per_node=2", "--shutdown-timeout=1",
                   "--no_python", worker("stubborn.sh"), dir});
  ASSERT_TRUE(
      eventually([&] { return fs::exists(dir + "/ready_0") && fs::exists(dir + "/ready_1"); },
                 std::chrono::seconds(20)));
  EXPECT_GE(processes_with_env(tag).size(), 7u);  // agent + 2 x (shell + 2 sleeps)
  kill(bg.pid, SIGTERM);
  EXPECT_EQ(wait_for(bg.pid, std::chrono::seconds(20)), 128 + SIGTERM);
  EXPECT_TRUE(eventually([&] { return processes_with_env(tag).empty(); }, std::chrono::seconds(5)));
  auto err = read_file(bg.err_path);
  EXPECT_NE(err.find("Received SIGTERM death signal"), std::string::npos) << err;
  EXPECT_NE(err.find("forcefully exiting via SIGKILL"), std::string::npos) << err;
}

TEST(LauncherE2E, SignalIsForwardedAsIs) {
  for (const char* sig : {"INT", "HUP", "USR1"}) {
    auto dir = make_temp_dir("ddprun-sig-");
    auto bg = start({ddprun_bin(), "--nproc_per_node=2",
                     "--signals_to_handle=SIGTERM,SIGINT,SIGHUP,SIGUSR1", "--no_python",
                     worker("record_signal.sh"), dir});
    ASSERT_TRUE(eventually([&] { return fs::exists(dir + "/ready_1"); }, std::chrono::seconds(20)));
    const int number = std::string(sig) == "INT"   ? SIGINT
                       : std::string(sig) == "HUP" ? SIGHUP
                                                   : SIGUSR1;
    kill(bg.pid, number);
    EXPECT_EQ(wait_for(bg.pid, std::chrono::seconds(20)), 128 + number) << sig;
    EXPECT_EQ(read_file(dir + "/signal_0"), std::string(sig) + "\n");
    EXPECT_EQ(read_file(dir + "/signal_1"), std::string(sig) + "\n");
  }
}

TEST(LauncherE2E, KilledAgentTakesItsWorkersAlong) {
  auto dir = make_temp_dir("ddprun-kill-");
  auto tag = unique_tag();
  auto bg = start({"/usr/bin/env", tag, ddprun_bin(), "--nproc_per_node=2", "--no_python",
                   worker("stubborn.sh"), dir});
  ASSERT_TRUE(eventually([&] { return fs::exists(dir + "/ready_1"); }, std::chrono::seconds(20)));
  kill(bg.pid, SIGKILL);
  EXPECT_EQ(wait_for(bg.pid, std::chrono::seconds(10)), 128 + SIGKILL);
  // Workers die with the agent (PDEATHSIG); the guardian SIGKILLs their groups, so their
  // sleeping grandchildren go too (tests/chaos/process_kill_test.cpp has more).
  EXPECT_TRUE(eventually([&] { return processes_with_env(tag).empty(); }, std::chrono::seconds(20)))
      << processes_with_env(tag).size() << " processes left";
  for (auto pid : processes_with_env(tag)) {
    kill(pid, SIGKILL);
  }
}

TEST(LauncherE2E, MissingScriptIsOneClearLineAndSpawnsNothing) {
  auto r = run_clean({"--nproc_per_node=2", "--no_python", "/nonexistent/train.sh"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "ddprun: error: cannot execute '/nonexistent/train.sh': No such file or "
            "directory (errno 2)\n");
  auto py = run_clean({"--python=/bin/sh", "/nonexistent/train.py"});
  EXPECT_EQ(py.status, 1);
  EXPECT_NE(py.err.find("'/nonexistent/train.py'"), std::string::npos) << py.err;
}

TEST(LauncherE2E, UsageErrorsExitTwoWithOneLine) {
  struct Row {
    std::vector<std::string> args;
    std::string needle;
  } rows[] = {{{"--nproc_per_node=x", "t.py"}, "'x'"},
              {{"--bogus", "t.py"}, "--bogus"},
              {{}, "training_script"},
              {{"--max_restarts"}, "--max"}};
  for (const auto& row : rows) {
    auto r = run_clean(row.args);
    EXPECT_EQ(r.status, 2) << row.needle;
    EXPECT_NE(r.err.find(row.needle), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
}

// The agent's store, which torch 1.13's torchrun does not give a one-node c10d job (its
// workers' rank 0 hosts one, as in the next test), works for 1.13's workers too when asked for.
TEST(LauncherE2E, RealGlooDdpStep) {
  if (!have_torch()) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch (install python3-torch)";
  }
  auto r = run({ddprun_bin(), "--standalone", "--nproc_per_node=2", "--agent-store=on",
                "--python=/usr/bin/python3", worker("gloo_allreduce.py")},
               RunOptions{{}, {}, "", std::chrono::seconds(120)});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("rank=0 world=2 allreduce=3.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank=1 world=2 allreduce=3.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("store=True"), std::string::npos) << r.out;
}

TEST(LauncherE2E, RealGlooDdpStepWithWorkerHostedStore) {
  if (!have_torch()) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch (install python3-torch)";
  }
  auto r = run({ddprun_bin(), "--standalone", "--nproc_per_node=2", "--agent-store=off",
                "--python=/usr/bin/python3", worker("gloo_allreduce.py")},
               RunOptions{{}, {}, "", std::chrono::seconds(120)});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("rank=1 world=2 allreduce=3.0 grad=12.0000 store=False"), std::string::npos)
      << r.out;
}
