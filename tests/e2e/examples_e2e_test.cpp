// End-to-end runs of the examples/ programs under ddprun with real torch (gloo on CPU):
// the SPMD tutorial in both launch styles, and minGPT to completion and through a SIGKILLed
// worker, resuming from its snapshot to the same final parameters.

#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>
#include <regex>
#include <set>

#include "support/subprocess.hpp"

using namespace ddprun::test;

namespace {

constexpr auto k_torch_timeout = std::chrono::seconds(240);
constexpr const char* k_no_torch = "/usr/bin/python3 cannot import torch (install python3-torch)";

std::vector<std::string> ddprun_python(const std::vector<std::string>& args) {
  std::vector<std::string> argv{ddprun_bin(), "--standalone", "--nproc_per_node",
                                "2",          "--python",     "/usr/bin/python3"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

std::size_t count_of(const std::string& text, const std::regex& pattern) {
  return static_cast<std::size_t>(std::distance(
      std::sregex_iterator(text.begin(), text.end(), pattern), std::sregex_iterator()));
}

/// The distinct final params_sha256 values printed by minGPT ranks.
std::set<std::string> final_hashes(const std::string& out) {
  std::set<std::string> hashes;
  std::regex pattern("params_sha256 ([0-9a-f]{64})");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), pattern);
       it != std::sregex_iterator(); ++it) {
    hashes.insert((*it)[1].str());
  }
  return hashes;
}

std::vector<std::string> mingpt_args(const std::string& snapshot) {
  return {source_path("examples/mingpt/train.py"),
          "--epochs",
          "3",
          "--max-steps-per-epoch",
          "10",
          "--snapshot-path",
          snapshot};
}

/// pid of global rank `rank` from its "[RANK r] pid P" start line, or -1.
pid_t worker_pid(const std::string& out, int rank) {
  std::smatch m;
  std::regex pattern("\\[RANK " + std::to_string(rank) + "\\] pid ([0-9]+) ");
  return std::regex_search(out, m, pattern) ? static_cast<pid_t>(std::stol(m[1].str())) : -1;
}

}  // namespace

TEST(ExamplesE2E, SpmdExampleRunsWithEnvAndLegacyLocalRank) {
  if (!have_torch()) {
    GTEST_SKIP() << k_no_torch;
  }
  struct Style {
    std::vector<std::string> launcher_flags;
    std::string source;
  } styles[] = {{{}, "(from env LOCAL_RANK)"}, {{"--legacy-local-rank"}, "(from --local_rank)"}};
  for (const auto& style : styles) {
    auto args = style.launcher_flags;
    args.insert(args.end(), {source_path("examples/spmd/example.py"), "--local_world_size", "2"});
    auto r = run(ddprun_python(args), RunOptions{{}, {}, "", k_torch_timeout});
    ASSERT_EQ(r.status, 0) << style.source << "\n" << r.out << r.err;
    for (const char* rank : {"0", "1"}) {
      EXPECT_TRUE(has(r.out, std::string("local_rank = ") + rank + " " + style.source)) << r.out;
      EXPECT_TRUE(has(r.out, std::string("world_size = 2, rank = ") + rank + ", backend=gloo"))
          << r.out;
      EXPECT_TRUE(has(r.out, std::string("rank ") + rank + " done loss=")) << r.out;
    }
  }
}

// One test for both runs: the uninterrupted run is the reference for the interrupted one.
TEST(ExamplesE2E, MinGptResumesAfterSigkilledWorkerToTheSameParameters) {
  if (!have_torch()) {
    GTEST_SKIP() << k_no_torch;
  }
  auto dir = make_temp_dir("ddprun-mingpt-");
  auto plain =
      run(ddprun_python(mingpt_args(dir + "/plain.pt")), RunOptions{{}, {}, "", k_torch_timeout});
  ASSERT_EQ(plain.status, 0) << plain.out << plain.err;
  EXPECT_EQ(count_of(plain.out, std::regex("\\[RANK [01]\\] final loss")), 2u) << plain.out;
  auto reference = final_hashes(plain.out);
  ASSERT_EQ(reference.size(), 1u) << plain.out;

  auto args = mingpt_args(dir + "/ft.pt");
  args.insert(args.end(), {"--sleep-per-step", "0.2"});
  args.insert(args.begin(), {"--max_restarts", "2"});
  auto bg = start(ddprun_python(args));
  // Kill rank 1 in the middle of epoch 1, after the epoch-0 snapshot was written.
  ASSERT_TRUE(
      eventually([&] { return has(read_file(bg.out_path), "[RANK 1] epoch 1 | batch 3 |"); },
                 std::chrono::seconds(180)))
      << read_file(bg.out_path) << read_file(bg.err_path);
  auto before_kill = read_file(bg.out_path);
  ASSERT_TRUE(has(before_kill, "snapshot saved to")) << before_kill;
  auto victim = worker_pid(before_kill, 1);
  ASSERT_GT(victim, 1) << before_kill;
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  int status = wait_for(bg.pid, k_torch_timeout);
  if (status < 0) {
    kill(-bg.pid, SIGKILL);
    wait_for(bg.pid, std::chrono::seconds(10));
  }
  auto out = read_file(bg.out_path);
  auto err = read_file(bg.err_path);
  ASSERT_EQ(status, 0) << out << err;
  EXPECT_TRUE(has(err, "Worker group FAILED. 2/2 attempts left; will restart worker group")) << err;
  EXPECT_EQ(count_of(out, std::regex("\\[RANK [01]\\] resuming from snapshot .* at epoch [12]")),
            2u)
      << out;
  EXPECT_EQ(final_hashes(out), reference) << out;
  std::filesystem::remove_all(dir);
}
