// Chaos, one node: termination signals to the agent while its workers ignore them or handle
// them slowly. What must hold (spec §5.3, §5.5, §5.6; docs/reliability.md): the signal is
// forwarded to every worker's group, the workers get the whole --shutdown-timeout grace, the
// ones still there after it get SIGKILL, nothing is left behind, and ddprun exits 1. A signal
// ddprun does not handle kills it (128+N) and the guardian still stops every worker group.

#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>
#include <fstream>

#include "support/subprocess.hpp"

using namespace ddprun::test;
namespace fs = std::filesystem;

namespace {

constexpr auto k_ready_timeout = std::chrono::seconds(30);
constexpr auto k_exit_timeout = std::chrono::seconds(30);
constexpr auto k_gone_timeout = std::chrono::seconds(20);
constexpr const char* k_grace = "--shutdown-timeout=3";
constexpr const char* k_handled = "--signals_to_handle=SIGTERM,SIGINT,SIGHUP,SIGUSR1";

struct Sig {
  int number;
  const char* name;
};
constexpr Sig k_signals[] = {
    {SIGTERM, "TERM"}, {SIGINT, "INT"}, {SIGHUP, "HUP"}, {SIGUSR1, "USR1"}};

/// A worker that records each signal it gets, then keeps working ("tick" lines) for as long as
/// it is allowed. `exit_after_ticks` > 0: it finishes its clean-up after that many ticks and
/// exits 0; 0: it never exits on its own (only SIGKILL stops it). A grandchild shares its group.
std::string write_worker(const std::string& dir, int exit_after_ticks) {
  auto path = dir + "/worker.sh";
  std::ofstream(path) << "#!/bin/sh\n"
                         "out=\"$1/rank_$RANK\"\n"
                         "for s in TERM INT HUP USR1; do trap \"echo got_$s >> $out\" $s; done\n"
                         "sleep 300 &\n"
                         "touch \"$1/ready_$RANK\"\n"
                         "ticks=0\n"
                         "while true; do\n"
                         "  sleep 0.1\n"
                         "  if grep -q got_ \"$out\" 2>/dev/null; then\n"
                         "    echo tick >> \"$out\"; ticks=$((ticks+1))\n"
                         "    if [ "
                      << exit_after_ticks << " -gt 0 ] && [ $ticks -ge " << exit_after_ticks
                      << " ]; then echo cleaned >> \"$out\"; kill $!; exit 0; fi\n"
                         "  fi\n"
                         "done\n";
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

struct Launch {
  Background bg;
  std::string dir;
  std::string tag;
};

Launch start_agent(int exit_after_ticks, std::vector<std::string> extra = {}) {
  Launch l{{}, make_temp_dir("ddprun-chaos-sig-"), unique_tag()};
  std::vector<std::string> argv{"/usr/bin/env", l.tag, ddprun_bin(), "--nproc_per_node=2", k_grace};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), {"--no_python", write_worker(l.dir, exit_after_ticks), l.dir});
  l.bg = start(argv);
  bool ready =
      eventually([&] { return fs::exists(l.dir + "/ready_0") && fs::exists(l.dir + "/ready_1"); },
                 k_ready_timeout);
  EXPECT_TRUE(ready) << read_file(l.bg.err_path);
  return l;
}

void expect_nothing_left(const Launch& l) {
  EXPECT_TRUE(eventually([&] { return processes_with_env(l.tag).empty(); }, k_gone_timeout))
      << processes_with_env(l.tag).size() << " processes left";
  for (auto pid : processes_with_env(l.tag)) {
    kill(pid, SIGKILL);
  }
}

std::string rank_record(const Launch& l, int rank) {
  return read_file(l.dir + "/rank_" + std::to_string(rank));
}

}  // namespace

TEST(ChaosSignals, IgnoringWorkersGetTheGraceThenSigkill) {
  for (const auto& sig : k_signals) {
    SCOPED_TRACE(sig.name);
    auto l = start_agent(0, {k_handled});
    kill(l.bg.pid, sig.number);
    EXPECT_EQ(wait_for(l.bg.pid, k_exit_timeout), 128 + sig.number);
    auto err = read_file(l.bg.err_path);
    EXPECT_NE(err.find(std::string("Received SIG") + sig.name + " death signal"), std::string::npos)
        << err;
    EXPECT_NE(err.find(std::string("closing signal SIG") + sig.name), std::string::npos) << err;
    EXPECT_NE(err.find("forcefully exiting via SIGKILL"), std::string::npos) << err;
    for (int rank = 0; rank < 2; ++rank) {
      auto record = rank_record(l, rank);
      // The forwarded signal arrived, and the worker kept running during the grace.
      EXPECT_EQ(record.rfind(std::string("got_") + sig.name + "\n", 0), 0u) << record;
      EXPECT_NE(record.find("tick\n"), std::string::npos) << record;
      EXPECT_EQ(record.find("cleaned"), std::string::npos) << record;
    }
    expect_nothing_left(l);
  }
}

TEST(ChaosSignals, HandlingWorkersFinishTheirCleanupWithoutSigkill) {
  for (const auto& sig : k_signals) {
    SCOPED_TRACE(sig.name);
    auto l = start_agent(3, {k_handled});
    kill(l.bg.pid, sig.number);
    EXPECT_EQ(wait_for(l.bg.pid, k_exit_timeout), 128 + sig.number);
    auto err = read_file(l.bg.err_path);
    EXPECT_EQ(err.find("forcefully exiting via SIGKILL"), std::string::npos) << err;
    for (int rank = 0; rank < 2; ++rank) {
      auto record = rank_record(l, rank);
      EXPECT_EQ(record, std::string("got_") + sig.name + "\ntick\ntick\ntick\ncleaned\n");
    }
    expect_nothing_left(l);
  }
}

TEST(ChaosSignals, AnUnhandledSignalKillsTheAgentAndTheGuardianCleansUp) {
  // SIGUSR1 is not in the default --signals-to-handle: like torchrun, ddprun dies of it.
  auto l = start_agent(0);
  kill(l.bg.pid, SIGUSR1);
  EXPECT_EQ(wait_for(l.bg.pid, k_exit_timeout), 128 + SIGUSR1);
  expect_nothing_left(l);
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(rank_record(l, rank), "") << "SIGKILLed by the guardian, not signalled";
  }
}
