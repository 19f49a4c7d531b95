// End-to-end tests of --stacks-on-failure: a rank fails while another still runs, and the
// report names the running rank's innermost frames, from faulthandler for Python workers and
// from the fallback for --no-python ones.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "support/subprocess.hpp"

using namespace ddprun::test;
namespace fs = std::filesystem;

namespace {

constexpr auto k_timeout = std::chrono::seconds(120);

RunResult run_ddprun(const std::vector<std::string>& args,
                     std::map<std::string, std::string> env = {}) {
  std::vector<std::string> argv{ddprun_bin(), "--nproc-per-node", "2", "--stacks-on-failure"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, RunOptions{std::move(env), {}, "", k_timeout});
}

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

}  // namespace

TEST(StacksE2E, HungCollectiveRankIsInTheReport) {
  if (!have_torch()) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch (install python3-torch)";
  }
  auto dir = make_temp_dir("ddprun-stacks-");
  auto r = run_ddprun(
      {"--python", "/usr/bin/python3", "--log-dir", dir, "--events-file", dir + "/events.jsonl",
       source_path("tests/support/workers/hang_in_collective.py")},
      {{"TORCHELASTIC_ERROR_FILE", dir + "/agent_error.json"}});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(std::regex_search(
      r.err, std::regex("rank 1: all_reduce \\(distributed_c10d\\.py:[0-9]+\\) <- "
                        "wait_in_all_reduce \\(hang_in_collective\\.py:[0-9]+\\)")))
      << r.err;
  EXPECT_TRUE(has(r.err, "Stacks of the ranks still running at the failure:\n")) << r.err;
  EXPECT_TRUE(has(r.err, "  rank      : 0 (local_rank: 0)\n")) << r.err;
  EXPECT_FALSE(has(r.err, "  rank      : 1 (local_rank: 1)\n")) << "captured, not failed";
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(r.err, m, std::regex("full stacks: (\\S+/attempt_0/1/stacks\\.txt)")))
      << r.err;
  EXPECT_TRUE(has(read_file(m[1].str()), "in wait_in_all_reduce")) << read_file(m[1].str());
  EXPECT_TRUE(has(read_file(dir + "/events.jsonl"), "\"event\":\"stacks\""));
  EXPECT_TRUE(has(read_file(dir + "/agent_error.json"), "wait_in_all_reduce"));
}

TEST(StacksE2E, NoPythonWorkerFallsBackToTheProcessState) {
  auto dir = make_temp_dir("ddprun-stacks-");
  auto script = dir + "/w.sh";
  std::ofstream(script) << "#!/bin/sh\nif [ \"$RANK\" = 0 ]; then /bin/sleep 1; exit 3; fi\n"
                           "exec /bin/sleep 60\n";
  fs::permissions(script, fs::perms::owner_all);
  // A PATH without gdb or eu-stack leaves only /proc.
  auto r = run_ddprun({"--no-python", "--log-dir", dir + "/logs", script}, {{"PATH", dir}});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(has(r.err, "rank 1: state S (sleeping)")) << r.err;
  EXPECT_TRUE(has(r.err, "(/proc; full stacks in ")) << r.err;
}
