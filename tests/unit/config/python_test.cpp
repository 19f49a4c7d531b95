// default_python and its use by resolve(): $PYTHON_EXEC, else python3 beside ddprun, else PATH.

#include "ddprun/cli/args.hpp"
#include "ddprun/config/launch_config.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

using namespace ddprun;
using namespace ddprun::config;

namespace {

/// A file test that knows only `files`, and records what it was asked.
struct FakeFiles {
  std::set<std::string> files;
  std::vector<std::string> asked;
  IsExecutable test() {
    return [this](const std::string& path) {
      asked.push_back(path);
      return files.count(path) > 0;
    };
  }
};

}  // namespace

TEST(DefaultPython, PrefersPythonBesideTheExecutable) {
  FakeFiles fs{{"/home/u/venv/bin/python3"}, {}};
  auto choice = default_python({}, "/home/u/venv/bin", fs.test());
  EXPECT_EQ(choice.path, "/home/u/venv/bin/python3");
  EXPECT_EQ(choice.origin, "default (python3 beside the ddprun executable)");
  EXPECT_EQ(default_python({}, "/usr/bin/", fs.test()).path, "python3");
  EXPECT_EQ(fs.asked.back(), "/usr/bin/python3");
  FakeFiles root{{"/python3"}, {}};
  EXPECT_EQ(default_python({}, "/", root.test()).path, "/python3");
}

TEST(DefaultPython, FallsBackToPathWithoutOne) {
  FakeFiles fs{{"/usr/bin/python3"}, {}};
  auto choice = default_python({}, "/work/build/src", fs.test());
  EXPECT_EQ(choice.path, "python3");
  EXPECT_EQ(choice.origin, "default (python3 on PATH)");
  EXPECT_EQ(fs.asked, std::vector<std::string>{"/work/build/src/python3"});
  EXPECT_EQ(default_python({}, "", fs.test()).path, "python3");
  EXPECT_EQ(default_python({}, "/usr/bin", IsExecutable{}).path, "python3");
}

TEST(DefaultPython, PythonExecWinsOverTheOneBeside) {
  FakeFiles fs{{"/venv/bin/python3"}, {}};
  auto choice = default_python(util::Env{{"PYTHON_EXEC", "/opt/py"}}, "/venv/bin", fs.test());
  EXPECT_EQ(choice.path, "/opt/py");
  EXPECT_EQ(choice.origin, "env PYTHON_EXEC");
  EXPECT_TRUE(fs.asked.empty());
  EXPECT_EQ(default_python(util::Env{{"PYTHON_EXEC", ""}}, "/venv/bin", fs.test()).path,
            "/venv/bin/python3");
}

TEST(DefaultPython, ResolveUsesItUnlessPythonIsGiven) {
  FakeFiles fs{{"/venv/bin/python3"}, {}};
  HostFacts host;
  host.exe_dir = "/venv/bin";
  host.is_executable = fs.test();
  auto resolve_args = [&host](const std::vector<std::string>& args) {
    auto parsed = cli::parse_args(args, {});
    EXPECT_TRUE(parsed);
    return resolve(*parsed, {}, host, sched::Detected{});
  };
  auto beside = resolve_args({"t.py"});
  ASSERT_TRUE(beside) << beside.error().message;
  EXPECT_EQ(beside->command.python, "/venv/bin/python3");
  EXPECT_NE(render_config(*beside).find("(default (python3 beside the ddprun executable))"),
            std::string::npos)
      << render_config(*beside);
  EXPECT_EQ(resolve_args({"--python", "/x/py", "t.py"})->command.python, "/x/py");
}
