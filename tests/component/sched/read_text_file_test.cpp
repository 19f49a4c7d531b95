// read_text_file against the real filesystem (a fresh temp directory per test).

#include "ddprun/sched/io.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

namespace ddprun::sched {
namespace {

namespace fs = std::filesystem;

class ReadTextFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ddprun_sched_" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    auto path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  fs::path dir_;
};

TEST_F(ReadTextFile, ReadsWholeNodefile) {
  std::string text;
  for (int i = 0; i < 5000; ++i) {
    text += "gadi-gpu-v100-" + std::to_string(i / 48) + "\n";
  }
  auto r = read_text_file(write("nodefile", text));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(*r, text);
}

TEST_F(ReadTextFile, MissingFileNamesThePath) {
  const auto path = (dir_ / "absent").string();
  auto r = read_text_file(path);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::io);
  EXPECT_NE(r.error().message.find(path), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("No such file"), std::string::npos) << r.error().message;
}

TEST_F(ReadTextFile, RefusesFilesOverTheLimit) {
  auto r = read_text_file(write("big", std::string(10000, 'x')), 4096);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("larger than 4096"), std::string::npos);
}

}  // namespace
}  // namespace ddprun::sched
