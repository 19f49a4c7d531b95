#include "ddprun/util/env.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

using ddprun::util::Env;
using ddprun::util::executables_on_path;

TEST(Env, ReadsEnvironArray) {
  char a[] = "A=1";
  char b[] = "B=x=y";
  char c[] = "EMPTY=";
  char bad[] = "NOEQUALS";
  char* envp[] = {a, b, c, bad, nullptr};
  auto env = Env::from_environ(envp);
  EXPECT_EQ(env.get("A"), "1");
  EXPECT_EQ(env.get("B"), "x=y");
  EXPECT_EQ(env.get("EMPTY"), "");
  EXPECT_FALSE(env.get_nonempty("EMPTY"));
  EXPECT_FALSE(env.has("NOEQUALS"));
}

TEST(Env, ToStringsIsSorted) {
  Env env{{"B", "2"}, {"A", "1"}};
  auto s = env.to_strings();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0], "A=1");
  EXPECT_EQ(s[1], "B=2");
}

TEST(ExecutablesOnPath, EveryExecutableInPathOrderEachRealFileOnce) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("ddprun_path_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "a");
  std::filesystem::create_directories(dir / "b");
  std::filesystem::create_directories(dir / "c");
  std::ofstream(dir / "a" / "tool") << "#!/bin/sh\n";
  std::ofstream(dir / "b" / "tool") << "#!/bin/sh\n";
  std::ofstream(dir / "c" / "tool") << "not executable\n";
  std::filesystem::permissions(dir / "a" / "tool", std::filesystem::perms::owner_all);
  std::filesystem::permissions(dir / "b" / "tool", std::filesystem::perms::owner_all);
  std::filesystem::create_directory_symlink(dir / "a", dir / "alias");
  const auto path = (dir / "c").string() + ":" + (dir / "b").string() + ":" +
                    (dir / "alias").string() + "::" + (dir / "a").string();

  EXPECT_EQ(
      executables_on_path("tool", path),
      (std::vector<std::string>{(dir / "b" / "tool").string(), (dir / "alias" / "tool").string()}));
  EXPECT_TRUE(executables_on_path("missing", path).empty());
  EXPECT_TRUE(executables_on_path("tool", "").empty());
  std::filesystem::remove_all(dir);
}
