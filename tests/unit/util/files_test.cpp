// read_file / read_file_or_error against the real filesystem (a fresh temp directory per test).

#include "ddprun/util/files.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

namespace ddprun::util {
namespace {

namespace fs = std::filesystem;

class ReadFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ddprun_files_" + std::to_string(std::random_device{}()));
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

TEST_F(ReadFile, ReadsAWholeFileLargerThanOneBuffer) {
  std::string text;
  for (int i = 0; i < 5000; ++i) {
    text += "gadi-gpu-v100-" + std::to_string(i / 48) + "\n";
  }
  const auto path = write("nodefile", text);
  auto r = read_file_or_error(path);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(*r, text);
  EXPECT_EQ(read_file(path), text);
}

TEST_F(ReadFile, KeepsBytesAsWritten) {
  const std::string text("a\r\nb\0c\n\n", 8);
  EXPECT_EQ(read_file(write("bytes", text)), text);
  EXPECT_EQ(read_file(write("empty", "")), "");
}

TEST_F(ReadFile, MissingFileNamesThePathAndTheOsError) {
  const auto path = (dir_ / "absent").string();
  auto r = read_file_or_error(path);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::io);
  EXPECT_EQ(r.error().message, "open('" + path + "'): No such file or directory");
  EXPECT_EQ(read_file(path), std::nullopt);
}

TEST_F(ReadFile, RefusesFilesOverTheLimit) {
  const auto path = write("big", std::string(10000, 'x'));
  auto r = read_file_or_error(path, 4096);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "read('" + path + "'): larger than 4096 bytes");
  EXPECT_TRUE(read_file_or_error(path, 10000).has_value());
}

TEST_F(ReadFile, ADirectoryIsNotReadable) {
  auto r = read_file_or_error(dir_.string());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::io);
  EXPECT_EQ(read_file(dir_.string()), std::nullopt);
}

}  // namespace
}  // namespace ddprun::util
