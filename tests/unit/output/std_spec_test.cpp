#include "ddprun/output/std_spec.hpp"

#include "ddprun/output/stdio_plan.hpp"

#include <gtest/gtest.h>

namespace ddprun::output {
namespace {

TEST(ParseStdSpec, SingleDigitAppliesToAllRanks) {
  auto s = parse_std_spec("3", "--tee");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->for_rank(0), (Std{true, true}));
  EXPECT_EQ(s->for_rank(7), (Std{true, true}));
  EXPECT_EQ(parse_std_spec("1", "-r")->for_rank(2), (Std{true, false}));
  EXPECT_EQ(parse_std_spec("2", "-r")->for_rank(2), (Std{false, true}));
  EXPECT_EQ(parse_std_spec("0", "-r")->for_rank(2), (Std{}));
}

TEST(ParseStdSpec, MapGivesUnnamedRanksZero) {
  auto s = parse_std_spec("0:1,1:2", "--redirects");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->for_rank(0), (Std{true, false}));
  EXPECT_EQ(s->for_rank(1), (Std{false, true}));
  EXPECT_EQ(s->for_rank(2), (Std{}));
  EXPECT_EQ(parse_std_spec("1:1,1:3", "-r")->for_rank(1), (Std{true, true}));
}

TEST(ParseStdSpec, RejectsWhatTorchrunsRegexesReject) {
  for (const char* bad : {"", "4", "12", "-1", "a", "0:4", "10:1", "0:1,", ",0:1", "0:1;1:2", " 3",
                          "0=1", "0:1,1", "3,3"}) {
    auto s = parse_std_spec(bad, "--redirects");
    ASSERT_FALSE(s) << bad;
    EXPECT_EQ(s.error().code, ErrorCode::usage);
    EXPECT_EQ(s.error().message,
              "--redirects: '" + std::string(bad) +
                  "' does not match: <^[0123]$> or <^(\\d:[0123],)*(\\d:[0123])$> (e.g. 3 or "
                  "0:1,1:2)");
  }
}

TEST(ParseLocalRanksFilter, ParsesCommaList) {
  EXPECT_EQ(*parse_local_ranks_filter("0,2, 5"), (std::set<int>{0, 2, 5}));
  EXPECT_TRUE(parse_local_ranks_filter("")->empty());
}

TEST(ParseLocalRanksFilter, RejectsNonIntegers) {
  for (const char* bad : {"a", "0,,1", "1.5", "0,", "-1"}) {
    auto f = parse_local_ranks_filter(bad);
    ASSERT_FALSE(f) << bad;
    EXPECT_NE(f.error().message.find("--local_ranks_filter must be a comma-separated list of "
                                     "integers e.g. --local_ranks_filter=0,1,2"),
              std::string::npos);
  }
}

struct PlanCase {
  const char* redirects;
  const char* tee;
  std::set<int> filter;
  int local_rank;
  bool files;
  Route out;
  Route err;
};

TEST(DecideStdio, FollowsTorchrunRules) {
  using R = Route;
  const PlanCase cases[] = {
      {"0", "0", {}, 0, true, R::inherit, R::inherit},
      {"3", "0", {}, 0, true, R::file_only, R::file_only},
      {"1", "0", {}, 0, true, R::file_only, R::inherit},
      {"0", "3", {}, 0, true, R::tee, R::tee},
      {"0", "2", {}, 0, true, R::inherit, R::tee},
      {"1", "2", {}, 0, true, R::file_only, R::tee},
      {"3", "1", {}, 0, true, R::tee, R::file_only},  // tee on top of redirect
      {"0:1,1:2", "0", {}, 1, true, R::inherit, R::file_only},
      {"0", "0:3", {}, 1, true, R::inherit, R::inherit},
      // --local-ranks-filter: shown ranks unchanged; hidden ranks keep files, lose console.
      {"0", "3", {0}, 0, true, R::tee, R::tee},
      {"0", "3", {0}, 1, true, R::file_only, R::file_only},
      {"0", "0", {0}, 1, true, R::file_only, R::file_only},
      {"1", "0", {0}, 1, true, R::file_only, R::file_only},
      {"0", "2", {0}, 1, true, R::file_only, R::file_only},
      // --log-dir /dev/null: no files anywhere.
      {"3", "0", {}, 0, false, R::inherit, R::inherit},
      {"0", "3", {}, 0, false, R::console_prefixed, R::console_prefixed},
      {"3", "3", {0}, 1, false, R::devnull, R::devnull},
  };
  for (const auto& c : cases) {
    auto plan = decide_stdio(*parse_std_spec(c.redirects, "-r"), *parse_std_spec(c.tee, "-t"),
                             c.filter, c.local_rank, c.files);
    EXPECT_EQ(plan, (WorkerStdioPlan{c.out, c.err}))
        << "-r " << c.redirects << " -t " << c.tee << " lr " << c.local_rank;
  }
}

}  // namespace
}  // namespace ddprun::output
