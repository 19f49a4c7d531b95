// Finding the workers' torch on disk: version text, sys.path reconstruction, and a fake
// interpreter tree (a venv over a /usr-like prefix).
#include "ddprun/host/torch_version.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace ddprun::host {
namespace {

namespace fs = std::filesystem;

TEST(TorchVersion, ParsesVersionPyAndOverrideText) {
  EXPECT_EQ(parse_torch_version(" '2.6.0+debian'"), (TorchVersion{2, 6, ""}));
  EXPECT_EQ(parse_torch_version(" '1.13.0a0'"), (TorchVersion{1, 13, ""}));
  EXPECT_EQ(parse_torch_version("2.10"), (TorchVersion{2, 10, ""}));
  EXPECT_FALSE(parse_torch_version("unknown"));
}

TEST(TorchVersion, DebianPythonSearchesLocalThenPackagedDirs) {
  const auto dirs = package_dirs("/usr/bin/python3", "/usr/bin/python3.11", "",
                                 util::Env{{"HOME", "/home/u"}, {"PYTHONPATH", "/src"}});
  EXPECT_EQ(dirs,
            (std::vector<std::string>{
                "/src", "/home/u/.local/lib/python3.11/site-packages",
                "/usr/lib/python3.11/site-packages", "/usr/local/lib/python3.11/dist-packages",
                "/usr/lib/python3/dist-packages", "/usr/lib/python3.11/dist-packages"}));
}

TEST(TorchVersion, AVenvWithoutSystemPackagesStopsAtItsOwn) {
  const auto dirs =
      package_dirs("/opt/v/bin/python3", "/usr/bin/python3.12", "home = /usr/bin\n", util::Env{});
  EXPECT_EQ(dirs, (std::vector<std::string>{"/opt/v/lib/python3.12/site-packages"}));
  const auto with_system = package_dirs("/opt/v/bin/python3", "/usr/bin/python3.12",
                                        "include-system-site-packages = true\n", util::Env{});
  EXPECT_EQ(with_system.size(), 5U);
}

TEST(TorchVersion, AWrapperScriptTellsNothing) {
  EXPECT_TRUE(
      package_dirs("/root/.pyenv/shims/python3", "/root/.pyenv/shims/python3", "", util::Env{})
          .empty());
}

class TorchTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("ddprun-torch-" + std::to_string(::getpid()));
    fs::create_directories(root_ / "usr/bin");
    std::ofstream(root_ / "usr/bin/python3.11") << "#!/bin/sh\n";
    fs::permissions(root_ / "usr/bin/python3.11", fs::perms::owner_all);
    fs::create_symlink("python3.11", root_ / "usr/bin/python3");
  }
  void TearDown() override { fs::remove_all(root_); }
  void install_torch(const fs::path& site, const std::string& version) {
    fs::create_directories(site / "torch");
    std::ofstream(site / "torch/version.py")
        << "from typing import Optional\n__version__ = '" << version << "'\ndebug = False\n";
  }
  fs::path root_;
};

TEST_F(TorchTree, TheFirstTorchOnThePathWinsAndTheOverrideWinsOverAll) {
  install_torch(root_ / "usr/lib/python3.11/site-packages", "2.6.0+cu124");
  install_torch(root_ / "extra", "1.13.1");
  const auto python = (root_ / "usr/bin/python3").string();
  auto found = find_worker_torch(python, util::Env{});
  ASSERT_TRUE(found);
  EXPECT_EQ(found->major, 2);
  EXPECT_EQ(found->minor, 6);
  EXPECT_EQ(found->where, (root_ / "usr/lib/python3.11/site-packages/torch").string());
  found = find_worker_torch(python, util::Env{{"PYTHONPATH", (root_ / "extra").string()}});
  ASSERT_TRUE(found);
  EXPECT_EQ(found->minor, 13);
  found = find_worker_torch(python, util::Env{{"DDPRUN_WORKER_TORCH", "2.4"}});
  ASSERT_TRUE(found);
  EXPECT_EQ(found->where, "DDPRUN_WORKER_TORCH");
  EXPECT_FALSE(find_worker_torch((root_ / "usr/bin/nothing").string(), util::Env{}));
}

TEST_F(TorchTree, ABareNameIsLookedUpOnPath) {
  install_torch(root_ / "usr/lib/python3.11/site-packages", "2.2.0");
  auto found = find_worker_torch("python3", util::Env{{"PATH", (root_ / "usr/bin").string()}});
  ASSERT_TRUE(found);
  EXPECT_EQ(found->minor, 2);
  EXPECT_FALSE(find_worker_torch("python3", util::Env{{"PATH", "/nonexistent"}}));
}

}  // namespace
}  // namespace ddprun::host
