// A few of the real-world torchrun lines of tests/unit/config/torchrun_corpus_test.cpp started
// for real (single node, two workers dumping their environment): each must start, give
// torchrun's ranks, and print exactly one WARNING line per value torchrun would ignore.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "support/subprocess.hpp"

using namespace ddprun::test;

namespace {

struct Line {
  std::string origin;
  std::vector<std::string> args;  ///< launcher options; the envdump worker is appended
  std::map<std::string, std::string> env;
  std::vector<std::string> warnings;  ///< a distinctive part of each WARNING line, in order
};

std::vector<Line> lines() {
  const auto port = "--master_port=" + std::to_string(free_port());
  return {
      {"issue #17: quotes kept by a wrapper",
       {"--standalone", "--nproc_per_node=2",
        "--rdzv_conf='join_timeout=5,last_call_timeout=1,timeout=5'"},
       {},
       {"removed the quotes", "'timeout=5': ignored"}},
      {"torch >= 2.2 built-in logs specs, unknown rdzv key",
       {port, "--nproc_per_node=2", "--logs_specs", "default", "--rdzv_conf=my_key=1"},
       {},
       {"'my_key=1': ignored, unknown key"}},
      {"Slurm preemption signals with a name torchrun skips",
       {"--standalone", "--nproc_per_node=2", "--signals-to-handle=SIGTERM,SIGUSR1,SIGFOO"},
       {},
       {"'SIGFOO': ignored"}},
      {"torchtitan's run_train.sh: c10d on localhost:0 (issue #24)",
       {"--nproc_per_node=2", "--rdzv_backend", "c10d", "--rdzv_endpoint=localhost:0"},
       {},
       {}},
      {"Kubeflow PyTorchJob environment (pod RANK/WORLD_SIZE are replaced)",
       {},
       {{"PET_NNODES", "1"},
        {"PET_NODE_RANK", "0"},
        {"PET_NPROC_PER_NODE", "2"},
        {"PET_MASTER_ADDR", "127.0.0.1"},
        {"PET_MASTER_PORT", std::to_string(free_port())},
        {"RANK", "5"},
        {"WORLD_SIZE", "9"}},
       {}},
  };
}

std::vector<std::string> warning_lines(const std::string& err) {
  std::vector<std::string> out;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] == 'W' && line.find(" ddprun] ") != std::string::npos) {
      out.push_back(line);
    }
  }
  return out;
}

TEST(TorchrunLinesE2E, StartWithTorchrunsRanksAndOneWarningPerIgnoredValue) {
  for (const auto& line : lines()) {
    SCOPED_TRACE(line.origin);
    const auto dir = make_temp_dir("ddprun-lines-");
    std::vector<std::string> argv{"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=" + dir,
                                  "OMP_NUM_THREADS=1"};
    for (const auto& [k, v] : line.env) {
      argv.push_back(k + "=" + v);
    }
    argv.push_back(ddprun_bin());
    argv.insert(argv.end(), line.args.begin(), line.args.end());
    for (const auto& tail :
         {std::string("--no_python"), source_path("tests/support/workers/envdump.sh"), dir}) {
      argv.push_back(tail);
    }
    auto r = run(argv, RunOptions{{}, {}, "", std::chrono::seconds(60)});
    ASSERT_EQ(r.status, 0) << r.err;
    for (int rank = 0; rank < 2; ++rank) {
      auto env = parse_env_file(dir + "/env_" + std::to_string(rank) + ".txt");
      EXPECT_EQ(env["RANK"], std::to_string(rank));
      EXPECT_EQ(env["LOCAL_RANK"], std::to_string(rank));
      EXPECT_EQ(env["WORLD_SIZE"], "2");
      EXPECT_EQ(env["LOCAL_WORLD_SIZE"], "2");
      EXPECT_EQ(env["GROUP_RANK"], "0");
    }
    auto warnings = warning_lines(r.err);
    ASSERT_EQ(warnings.size(), line.warnings.size()) << r.err;
    for (std::size_t i = 0; i < warnings.size(); ++i) {
      EXPECT_NE(warnings[i].find(line.warnings[i]), std::string::npos) << warnings[i];
    }
  }
}

}  // namespace
