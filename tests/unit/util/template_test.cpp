#include "ddprun/util/template.hpp"

#include <gtest/gtest.h>

namespace ddprun::util {
namespace {

const TemplateVars k_vars = {{"rank", "7"}, {"local_rank", "2"}, {"_x1", "X"}};

TEST(SubstituteVars, ReplacesBracedAndBareNames) {
  EXPECT_EQ(substitute_vars("[${rank}]:", k_vars), "[7]:");
  EXPECT_EQ(substitute_vars("$rank-$local_rank|${_x1}", k_vars), "7-2|X");
  EXPECT_EQ(substitute_vars("${rank}0 ${local_rank}${rank}", k_vars), "70 27");
}

TEST(SubstituteVars, ABareNameIsTheLongestIdentifier) {
  EXPECT_EQ(substitute_vars("$rank0 $ranks $rank.", k_vars), "$rank0 $ranks 7.");
  EXPECT_EQ(substitute_vars("$local_rank_", k_vars), "$local_rank_");
}

TEST(SubstituteVars, CollapsesDoubleDollars) {
  EXPECT_EQ(substitute_vars("a$$b", k_vars), "a$b");
  EXPECT_EQ(substitute_vars("$$rank", k_vars), "$rank");
  EXPECT_EQ(substitute_vars("$$${rank}", k_vars), "$7");
  EXPECT_EQ(substitute_vars("$$$$", k_vars), "$$");
}

TEST(SubstituteVars, LeavesUnknownNamesAsWritten) {
  EXPECT_EQ(substitute_vars("${other} $unknown", k_vars), "${other} $unknown");
  EXPECT_EQ(substitute_vars("${Rank}", k_vars), "${Rank}");
}

TEST(SubstituteVars, LeavesEveryOtherDollarAsWritten) {
  EXPECT_EQ(substitute_vars("cost $5 $ end$", k_vars), "cost $5 $ end$");
  EXPECT_EQ(substitute_vars("${rank", k_vars), "${rank");
  EXPECT_EQ(substitute_vars("${} ${1rank} ${ rank} ${rank-x}", k_vars),
            "${} ${1rank} ${ rank} ${rank-x}");
  EXPECT_EQ(substitute_vars("${x ${rank}", k_vars), "${x 7");
}

TEST(SubstituteVars, EmptyVarsChangeOnlyDoubleDollars) {
  EXPECT_EQ(substitute_vars("$rank ${rank} $$", {}), "$rank ${rank} $");
  EXPECT_EQ(substitute_vars("", k_vars), "");
}

}  // namespace
}  // namespace ddprun::util
