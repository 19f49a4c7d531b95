#include "ddprun/output/log_dir.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace ddprun::output {
namespace {

namespace fs = std::filesystem;

/// The temporary root where a --log-dir is given: never used, so never created.
const std::string k_unused_temp = "/nonexistent/ddprun-temp-root";

class LogDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ddprun_logdir_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string dir_;
};

TEST_F(LogDirTest, RunDirIsRunIdWithRandomSuffixInsideLogDir) {
  auto log_dir = dir_ + "/logs/nested";  // created when missing
  auto run = make_run_dir(log_dir, "myjob", k_unused_temp);
  ASSERT_TRUE(run) << run.error().message;
  fs::path p(*run);
  EXPECT_EQ(p.parent_path(), fs::path(log_dir));
  auto name = p.filename().string();
  ASSERT_EQ(name.size(), std::string("myjob_").size() + 8);
  EXPECT_EQ(name.rfind("myjob_", 0), 0U);
  EXPECT_TRUE(fs::is_directory(p));
  auto second = make_run_dir(log_dir, "myjob", k_unused_temp);
  ASSERT_TRUE(second);
  EXPECT_NE(*second, *run);
}

TEST_F(LogDirTest, EmptyLogDirMakesTorchelasticTempDirUnderTmpdir) {
  auto run = make_run_dir("", "job", dir_);
  ASSERT_TRUE(run) << run.error().message;
  fs::path base = fs::path(*run).parent_path();
  EXPECT_EQ(base.parent_path(), fs::path(dir_));
  EXPECT_EQ(base.filename().string().rfind("torchelastic_", 0), 0U);
  EXPECT_EQ(base.filename().string().size(), std::string("torchelastic_").size() + 8);
}

TEST_F(LogDirTest, LogDirThatIsAFileIsAConfigError) {
  auto file = dir_ + "/f";
  std::ofstream(file) << "x";
  auto run = make_run_dir(file, "job", k_unused_temp);
  ASSERT_FALSE(run);
  EXPECT_EQ(run.error().code, ErrorCode::config);
  EXPECT_NE(run.error().message.find(file), std::string::npos);
}

TEST_F(LogDirTest, AttemptDirsAreWipedOnReuseAndEarlierAttemptsKept) {
  auto run = *make_run_dir(dir_, "job", k_unused_temp);
  ASSERT_TRUE(prepare_attempt_dir(run, 0, 2));
  EXPECT_TRUE(fs::is_directory(run + "/attempt_0/0"));
  EXPECT_TRUE(fs::is_directory(run + "/attempt_0/1"));
  std::ofstream(log_paths(run, 0, 1).stdout_log) << "attempt 0 output";
  ASSERT_TRUE(prepare_attempt_dir(run, 1, 2));
  EXPECT_TRUE(fs::exists(log_paths(run, 0, 1).stdout_log)) << "attempt_0 is kept";
  EXPECT_TRUE(fs::is_directory(run + "/attempt_1/1"));
  ASSERT_TRUE(prepare_attempt_dir(run, 0, 1));  // a membership change reuses the number
  EXPECT_FALSE(fs::exists(log_paths(run, 0, 1).stdout_log));
  EXPECT_FALSE(fs::exists(run + "/attempt_0/1"));
  EXPECT_TRUE(fs::is_directory(run + "/attempt_0/0"));
}

TEST(MakeRunDir, DevNullDisablesFiles) {
  auto r = make_run_dir("/dev/null", "job", k_unused_temp);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "");
}

}  // namespace
}  // namespace ddprun::output
