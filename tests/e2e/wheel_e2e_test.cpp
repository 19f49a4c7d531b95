// The wheel, as a PyTorch user in a venv meets it: scripts/wheel.sh packages the build tree's
// ddprun (no second build), pip installs it offline into a fresh venv, `ddprun` and
// `python -m ddprun` run from there, a 2-worker gloo job without --python gets the venv's
// python3 although another python3 comes first on PATH, and pip uninstall removes it again.

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "support/subprocess.hpp"

using namespace ddprun::test;
namespace fs = std::filesystem;

namespace {

constexpr auto k_slow = std::chrono::seconds(180);

/// Runs argv with pip kept offline and quiet, and no interpreter chosen by the environment.
RunResult run_offline(const std::vector<std::string>& argv) {
  return run(argv, RunOptions{{{"PIP_NO_INDEX", "1"},
                               {"PIP_NO_CACHE_DIR", "1"},
                               {"PIP_DISABLE_PIP_VERSION_CHECK", "1"},
                               {"PATH", "/usr/bin:/bin"}},
                              {"PYTHON_EXEC", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH"},
                              "",
                              k_slow});
}

/// The only .whl in `dir`, or "" when there is not exactly one.
std::string only_wheel(const std::string& dir) {
  std::vector<fs::path> wheels;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".whl") {
      wheels.push_back(e.path());
    }
  }
  return wheels.size() == 1 ? wheels.front().string() : "";
}

class WheelE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_torch()) {
      GTEST_SKIP() << "/usr/bin/python3 cannot import torch (install python3-torch)";
    }
    dir_ = make_temp_dir("ddprun-wheel-");
    venv_ = dir_ + "/venv";
    auto made = run_offline({"/usr/bin/python3", "-m", "venv", "--system-site-packages", venv_});
    if (made.status != 0) {
      GTEST_SKIP() << "python3 -m venv failed (install python3-venv): " << made.err;
    }
  }
  void TearDown() override {
    if (!dir_.empty()) {
      fs::remove_all(dir_);
    }
  }
  std::string dir_;
  std::string venv_;
};

}  // namespace

TEST_F(WheelE2E, PipInstallIntoVenvRunsWorkersWithTheVenvPython) {
  auto built = run_offline({"/bin/bash", source_path("scripts/wheel.sh"), "--binary", ddprun_bin(),
                            "--out", dir_ + "/dist"});
  ASSERT_EQ(built.status, 0) << built.err;
  const auto wheel = only_wheel(dir_ + "/dist");
  EXPECT_TRUE(std::regex_match(
      fs::path(wheel).filename().string(),
      std::regex(R"(ddprun-\d+\.\d+\.\d+-py3-none-(manylinux_2_\d+|linux)_[a-z0-9_]+\.whl)")))
      << wheel;
  EXPECT_EQ(built.out, wheel + "\n");
  const auto py = venv_ + "/bin/python";
  auto installed = run_offline({py, "-m", "pip", "install", "--no-deps", wheel});
  ASSERT_EQ(installed.status, 0) << installed.out << installed.err;

  auto version = run_offline({venv_ + "/bin/ddprun", "--version"});
  ASSERT_EQ(version.status, 0) << version.err;
  EXPECT_NE(version.out.find("ddprun"), std::string::npos) << version.out;
  auto via_module = run_offline({py, "-m", "ddprun", "--version"});
  EXPECT_EQ(via_module.status, 0) << via_module.err;
  EXPECT_EQ(via_module.out, version.out);

  // PATH finds /usr/bin/python3 first (prefix /usr): only the venv's python3 gives prefix=venv.
  auto job = run_offline({venv_ + "/bin/ddprun", "--standalone", "--nproc_per_node=2",
                          source_path("tests/support/workers/gloo_allreduce.py")});
  ASSERT_EQ(job.status, 0) << job.out << job.err;
  for (const auto* rank : {"rank=0", "rank=1"}) {
    EXPECT_NE(job.out.find(std::string(rank) + " world=2 allreduce=3.0"), std::string::npos)
        << job.out;
  }
  EXPECT_EQ(job.out.find("prefix=/usr\n"), std::string::npos) << job.out;
  const bool venv_prefix =
      job.out.find("prefix=" + venv_ + "\n") != std::string::npos ||
      job.out.find("prefix=" + fs::canonical(venv_).string() + "\n") != std::string::npos;
  EXPECT_TRUE(venv_prefix) << job.out;

  auto removed = run_offline({py, "-m", "pip", "uninstall", "--yes", "ddprun"});
  ASSERT_EQ(removed.status, 0) << removed.out << removed.err;
  EXPECT_FALSE(fs::exists(venv_ + "/bin/ddprun"));
  EXPECT_NE(run_offline({py, "-m", "ddprun", "--version"}).status, 0);
}

// ddprun copied beside a symlinked python3 (as in a venv) takes that path, not the link's target.
TEST(PythonBesideE2E, PrintConfigShowsTheUnresolvedPythonBesideDdprun) {
  const auto dir = make_temp_dir("ddprun-beside-");
  fs::create_symlink("/usr/bin/python3", dir + "/python3");
  fs::copy_file(ddprun_bin(), dir + "/ddprun");
  auto r = run_offline({dir + "/ddprun", "--print-config", "train.py"});
  fs::remove_all(dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(" " + dir + "/python3  (default (python3 beside the ddprun executable))"),
            std::string::npos)
      << r.out;
  auto in_tree = run_offline({ddprun_bin(), "--print-config", "train.py"});
  EXPECT_NE(in_tree.out.find(" python3  (default (python3 on PATH))"), std::string::npos)
      << in_tree.out;
}
