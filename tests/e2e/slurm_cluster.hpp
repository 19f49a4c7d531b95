#pragma once
// The real Slurm 22.05 cluster of ../shared/slurm-sim (2 nodes in network namespaces on this
// machine) as a gtest fixture: the suite brings it up once and down at the end, and skips with
// the reason where it cannot run (not root, slurm-sim not beside the checkout). The tests of
// every file in the slurm_e2e_test binary share this one fixture, hence one cluster.

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "support/subprocess.hpp"

namespace ddprun::test::slurmsim {

inline constexpr auto k_up_timeout = std::chrono::seconds(300);
inline constexpr auto k_down_timeout = std::chrono::seconds(120);
inline constexpr auto k_command_timeout = std::chrono::seconds(120);
inline constexpr std::size_t k_error_tail = 2000;

inline std::string sim_script() { return source_path("../shared/slurm-sim/slurm-sim.sh"); }

/// Runs a shell command with the cluster's client wrappers first on PATH.
inline RunResult slurm(const std::string& command,
                       std::chrono::seconds timeout = k_command_timeout) {
  std::string script = "eval \"$(" + sim_script() + " env)\" && " + command;
  return run({"/bin/bash", "-c", script}, RunOptions{{}, {}, "", timeout});
}

inline std::string worker(const std::string& name) {
  return source_path("tests/support/workers/" + name);
}

class SlurmE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (getuid() != 0) {
      skip_reason_ = "needs root (slurm-sim creates network namespaces)";
    } else if (!std::filesystem::exists(sim_script())) {
      skip_reason_ = "../shared/slurm-sim is not beside this checkout";
    } else {
      auto up = run({sim_script(), "up", "2"}, RunOptions{{}, {}, "", k_up_timeout});
      if (up.status != 0) {
        skip_reason_ = "";
        up_error_ = "slurm-sim up 2 failed: " +
                    up.err.substr(up.err.size() > k_error_tail ? up.err.size() - k_error_tail : 0);
      }
    }
  }
  static void TearDownTestSuite() {
    if (skip_reason_.empty()) {
      run({sim_script(), "down"}, RunOptions{{}, {}, "", k_down_timeout});
    }
  }
  void SetUp() override {
    if (!skip_reason_.empty()) {
      GTEST_SKIP() << skip_reason_;
    }
    ASSERT_TRUE(up_error_.empty()) << up_error_;
    dir_ = make_temp_dir("ddprun-slurm-");
  }

  static inline std::string skip_reason_;
  static inline std::string up_error_;
  std::string dir_;
};

}  // namespace ddprun::test::slurmsim
