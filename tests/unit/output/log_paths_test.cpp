#include "ddprun/output/log_paths.hpp"

#include <gtest/gtest.h>

namespace ddprun::output {
namespace {

TEST(LogPaths, FollowsTorchrunLayout) {
  auto p = log_paths("/logs/job_ab12cd34", 2, 1);
  EXPECT_EQ(p.dir, "/logs/job_ab12cd34/attempt_2/1");
  EXPECT_EQ(p.stdout_log, "/logs/job_ab12cd34/attempt_2/1/stdout.log");
  EXPECT_EQ(p.stderr_log, "/logs/job_ab12cd34/attempt_2/1/stderr.log");
  EXPECT_EQ(p.error_file, "/logs/job_ab12cd34/attempt_2/1/error.json");
}

TEST(TempRoot, IsTmpdirWhenSetAndNotEmptyElseTmp) {
  EXPECT_EQ(temp_root(util::Env{{"TMPDIR", "/scratch/me"}}), "/scratch/me");
  EXPECT_EQ(temp_root(util::Env{{"TMPDIR", ""}}), "/tmp");
  EXPECT_EQ(temp_root(util::Env{}), "/tmp");
}

TEST(LogPaths, EmptyWhenFilesDisabled) {
  auto p = log_paths("", 0, 0);
  EXPECT_TRUE(p.dir.empty());
  EXPECT_TRUE(p.error_file.empty());
}

}  // namespace
}  // namespace ddprun::output
