#include "ddprun/util/env.hpp"

#include <gtest/gtest.h>

using ddprun::util::Env;

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
