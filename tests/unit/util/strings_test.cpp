#include "ddprun/util/strings.hpp"

#include <gtest/gtest.h>

using namespace ddprun::util;

TEST(ParseInt, AcceptsSignsAndSpaces) {
  EXPECT_EQ(*parse_int(" 42 "), 42);
  EXPECT_EQ(*parse_int("-7"), -7);
  EXPECT_EQ(*parse_int("+3"), 3);
}

TEST(ParseInt, RejectsGarbageNamingTheText) {
  auto r = parse_int("4x");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "invalid integer '4x'");
  EXPECT_FALSE(parse_int(""));
  EXPECT_FALSE(parse_int("1.5"));
  EXPECT_FALSE(parse_int("99999999999999999999"));
}

TEST(ParseIntIn, ChecksRange) {
  EXPECT_TRUE(parse_int_in("5", 0, 10));
  auto r = parse_int_in("11", 0, 10);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "value '11' is out of range [0, 10]");
}

TEST(ParseSeconds, ConvertsFractions) {
  EXPECT_EQ(parse_seconds("0.1")->count(), 100);
  EXPECT_EQ(parse_seconds("30")->count(), 30000);
  EXPECT_FALSE(parse_seconds("-1"));
  EXPECT_FALSE(parse_seconds("nan"));
  EXPECT_FALSE(parse_seconds("5s"));
}

TEST(ParseBoolWord, AcceptsTorchrunWords) {
  for (const char* w : {"1", "true", "T", "yes", "Y"}) {
    EXPECT_TRUE(*parse_bool_word(w)) << w;
  }
  for (const char* w : {"0", "False", "f", "NO", "n"}) {
    EXPECT_FALSE(*parse_bool_word(w)) << w;
  }
  EXPECT_FALSE(parse_bool_word("maybe"));
}

TEST(SubstituteVar, MatchesPythonSafeSubstitute) {
  // Spec 1.3: 'lr=${local_rank}' '$local_rank' '${rank}' -> lr=0 0 ${rank}
  EXPECT_EQ(substitute_var("lr=${local_rank}", "local_rank", "0"), "lr=0");
  EXPECT_EQ(substitute_var("$local_rank", "local_rank", "0"), "0");
  EXPECT_EQ(substitute_var("${rank}", "local_rank", "0"), "${rank}");
  EXPECT_EQ(substitute_var("a$$b", "local_rank", "0"), "a$b");
  EXPECT_EQ(substitute_var("$local_ranks", "local_rank", "0"), "$local_ranks");
  EXPECT_EQ(substitute_var("cost $5 $", "local_rank", "0"), "cost $5 $");
  EXPECT_EQ(substitute_var("${local_rank", "local_rank", "0"), "${local_rank");
}

TEST(Split, KeepsEmptyFields) {
  auto parts = split("a,,b", ',');
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1], "");
}

// Regression: a value holding a newline split the one-line error in two.
TEST(Quoted, EscapesControlCharactersLikePythonRepr) {
  EXPECT_EQ(ddprun::util::quoted("abc"), "'abc'");
  EXPECT_EQ(ddprun::util::quoted("a\nb\rc\td"), "'a\\nb\\rc\\td'");
  EXPECT_EQ(ddprun::util::quoted(std::string("x\0y\x1b\x7f", 5)), "'x\\x00y\\x1b\\x7f'");
  EXPECT_EQ(ddprun::util::quoted("caf\xc3\xa9 \\ '"), "'caf\xc3\xa9 \\ ''");
  EXPECT_EQ(parse_int("1\n2").error().message, "invalid integer '1\\n2'");
}
