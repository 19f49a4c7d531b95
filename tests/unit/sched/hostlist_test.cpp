#include "ddprun/sched/hostlist.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ddprun::sched {
namespace {

using Hosts = std::vector<std::string>;

Hosts expand_ok(std::string_view text) {
  auto r = expand_hostlist(text);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? *r : Hosts{};
}

std::string expand_error(std::string_view text) {
  auto r = expand_hostlist(text);
  EXPECT_FALSE(r.has_value()) << "expected an error for '" << text << "'";
  return r ? "" : r.error().message;
}

// --- The spec's vectors (schedulers.md §1.3), in its order ---

TEST(Hostlist, EmptyTextGivesNoHosts) { EXPECT_EQ(expand_ok(""), Hosts{}); }

TEST(Hostlist, PlainNameIsOneHost) { EXPECT_EQ(expand_ok("n1"), Hosts{"n1"}); }

TEST(Hostlist, SimpleRange) { EXPECT_EQ(expand_ok("n[1-3]"), (Hosts{"n1", "n2", "n3"})); }

TEST(Hostlist, RangeAndSingleNumber) {
  EXPECT_EQ(expand_ok("n[1-3,5]"), (Hosts{"n1", "n2", "n3", "n5"}));
}

TEST(Hostlist, ZeroPaddedRange) {
  EXPECT_EQ(expand_ok("n[01-10]"),
            (Hosts{"n01", "n02", "n03", "n04", "n05", "n06", "n07", "n08", "n09", "n10"}));
}

TEST(Hostlist, UnpaddedLowBoundGrowsWidth) {
  EXPECT_EQ(expand_ok("n[8-10]"), (Hosts{"n8", "n9", "n10"}));
}

TEST(Hostlist, PaddingWidthComesFromLowBound) {
  EXPECT_EQ(expand_ok("n[008-10]"), (Hosts{"n008", "n009", "n010"}));
  EXPECT_EQ(expand_ok("n[08-10]"), (Hosts{"n08", "n09", "n10"}));
  EXPECT_EQ(expand_ok("n[01-1]"), Hosts{"n01"});
}

TEST(Hostlist, MixedPlainAndBracketTokens) {
  EXPECT_EQ(expand_ok("a,b[1-2],c"), (Hosts{"a", "b1", "b2", "c"}));
}

TEST(Hostlist, TwoBracketGroupsOuterVariesSlowest) {
  EXPECT_EQ(expand_ok("r[1-2]-n[01-02]"), (Hosts{"r1-n01", "r1-n02", "r2-n01", "r2-n02"}));
}

TEST(Hostlist, SuffixAfterBracket) { EXPECT_EQ(expand_ok("n[1-2]-ib"), (Hosts{"n1-ib", "n2-ib"})); }

TEST(Hostlist, DomainSuffixAfterBracket) {
  EXPECT_EQ(expand_ok("n[1-2].cluster"), (Hosts{"n1.cluster", "n2.cluster"}));
}

TEST(Hostlist, RejectsLowAboveHigh) {
  auto msg = expand_error("n[3-1]");
  EXPECT_NE(msg.find("'n[3-1]'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("low > high"), std::string::npos) << msg;
}

TEST(Hostlist, RejectsUnclosedBracket) {
  auto msg = expand_error("n[1-");
  EXPECT_NE(msg.find("'n[1-'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("without ']'"), std::string::npos) << msg;
}

TEST(Hostlist, RejectsRangeWiderThanSlurmMaxRange) {
  auto msg = expand_error("n[1-70000]");
  EXPECT_NE(msg.find("65536"), std::string::npos) << msg;
}

TEST(Hostlist, SpacesTabsAndNewlinesSeparateAndCollapse) {
  EXPECT_EQ(expand_ok("a b\tc\nd"), (Hosts{"a", "b", "c", "d"}));
  EXPECT_EQ(expand_ok(" ,a,, \n b[1-2] ,"), (Hosts{"a", "b1", "b2"}));
}

TEST(Hostlist, DuplicatesAreKeptInInputOrder) {
  EXPECT_EQ(expand_ok("n[1-2],n1"), (Hosts{"n1", "n2", "n1"}));
}

// --- Further cases from the spec's prose ---

TEST(Hostlist, MixedListWithPaddedGroupsAndPlainNames) {
  EXPECT_EQ(expand_ok("gpu-[01-04,07],login[1-2]"),
            (Hosts{"gpu-01", "gpu-02", "gpu-03", "gpu-04", "gpu-07", "login1", "login2"}));
}

TEST(Hostlist, CommaInsideBracketsDoesNotSplit) {
  // The naive "split on the first '['" parser of Megatron-Bridge#3830 got this wrong.
  EXPECT_EQ(expand_ok("nodeA,nodeB[001,003],nodeC"),
            (Hosts{"nodeA", "nodeB001", "nodeB003", "nodeC"}));
}

TEST(Hostlist, DashedNamesAndNamesWithoutDigitsArePlain) {
  EXPECT_EQ(expand_ok("jean-zay-ia810,alpha,beta,gamma"),
            (Hosts{"jean-zay-ia810", "alpha", "beta", "gamma"}));
}

TEST(Hostlist, BracketlessDashIsALiteralName) { EXPECT_EQ(expand_ok("tux1-5"), Hosts{"tux1-5"}); }

TEST(Hostlist, SuffixWithPaddedRangeSlurm2311Style) {
  EXPECT_EQ(expand_ok("node[0009-0010]-int"), (Hosts{"node0009-int", "node0010-int"}));
}

TEST(Hostlist, ThreeGroupsWithSuffixAndListInsideBrackets) {
  EXPECT_EQ(expand_ok("r[1,3]s[1-2]n[7]x"), (Hosts{"r1s1n7x", "r1s2n7x", "r3s1n7x", "r3s2n7x"}));
}

TEST(Hostlist, RangeOfExactlySlurmMaxRangeIsAccepted) {
  EXPECT_EQ(expand_ok("n[0-65535]").size(), k_max_range_hosts);
}

TEST(Hostlist, RejectsNonDigitsNegativesAndEmptyItems) {
  for (const char* text : {"n[a-b]", "n[1x2]", "n[-1]", "n[1--3]", "n[1-2-3]", "n[]", "n[1,,2]",
                           "n[ 1]", "bgl[123x456]"}) {
    auto msg = expand_error(text);
    EXPECT_NE(msg.find("hostlist '"), std::string::npos) << text << ": " << msg;
  }
}

TEST(Hostlist, RejectsStrayAndNestedBrackets) {
  EXPECT_NE(expand_error("n1]").find("']' without '['"), std::string::npos);
  EXPECT_NE(expand_error("n[1[2]]").find("nested"), std::string::npos);
}

TEST(Hostlist, RejectsHostlistFunctions) {
  EXPECT_NE(expand_error("feature{gpu}").find("not supported"), std::string::npos);
}

TEST(Hostlist, RejectsPrefixExplosion) {
  // Slurm's MAX_PREFIX_CNT guard: a[0-999999999].b[0-9] style input.
  auto msg = expand_error("a[0-65535]b[0-65535]");
  EXPECT_NE(msg.find("names"), std::string::npos) << msg;
}

TEST(Hostlist, RejectsTooManyNamesAcrossTokens) {
  std::string text;
  for (int i = 0; i < 16; ++i) {
    text += "n[0-65535],";
  }
  EXPECT_NE(expand_error(text).find("1000000"), std::string::npos);
}

TEST(Hostlist, DefaultCapsAreTheProductionOnes) {
  const HostlistLimits defaults;
  EXPECT_EQ(defaults.max_range_hosts, k_max_range_hosts);
  EXPECT_EQ(defaults.max_prefix_expansions, k_max_prefix_expansions);
  EXPECT_EQ(defaults.max_names, k_max_hostlist_names);
}

TEST(Hostlist, DefaultNameCapGivesItsOneLineError) {
  std::string text;
  for (int i = 0; i < 16; ++i) {
    text += "n[0-65535],";
  }
  EXPECT_EQ(expand_error(text),
            "hostlist '" + text.substr(0, 80) + "...': more than 1000000 names");
  EXPECT_EQ(expand_hostlist(text, HostlistLimits{}).error().message, expand_error(text));
}

TEST(Hostlist, DefaultPrefixCapGivesItsOneLineError) {
  EXPECT_EQ(expand_error("a[0-65535]b[0-1]c[1]"),
            "hostlist 'a[0-65535]b[0-1]c[1]': more than 65536 prefix expansions before a "
            "bracket group");
}

TEST(Hostlist, SmallCapsGiveTheSameOneLineErrors) {
  const HostlistLimits small{.max_range_hosts = 8, .max_prefix_expansions = 4, .max_names = 16};
  EXPECT_EQ(expand_hostlist("n[1-17]", small).error().message,
            "hostlist 'n[1-17]': range '1-17' spans more than 8 hosts");
  EXPECT_EQ(expand_hostlist("n[1-8],m[1-8],o1", small).error().message,
            "hostlist 'n[1-8],m[1-8],o1': more than 16 names");
  EXPECT_EQ(expand_hostlist("a[1-5]b[1]", small).error().message,
            "hostlist 'a[1-5]b[1]': more than 4 prefix expansions before a bracket group");
  EXPECT_EQ(expand_hostlist("a[1-4]b[1-5]", small).error().message,
            "hostlist 'a[1-4]b[1-5]': more than 16 names");
}

TEST(Hostlist, SmallCapsAcceptWhatFitsWithTheSameHosts) {
  const HostlistLimits small{.max_range_hosts = 8, .max_prefix_expansions = 4, .max_names = 16};
  const auto* text = "a[1-4]b[1-4]";
  auto r = expand_hostlist(text, small);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->size(), 16u);
  EXPECT_EQ(*r, expand_ok(text));
}

TEST(Hostlist, PlainNamesCountTowardsTheNameCap) {
  // Found while making the caps a parameter: names without brackets were added unchecked, so
  // a list could end with more than max_names hosts.
  const HostlistLimits small{.max_names = 3};
  EXPECT_EQ(expand_hostlist("a,b,c", small)->size(), 3u);
  EXPECT_EQ(expand_hostlist("a,b,c,d", small).error().message,
            "hostlist 'a,b,c,d': more than 3 names");
  EXPECT_EQ(expand_hostlist("n[1-2]x,c,d", small).error().message,
            "hostlist 'n[1-2]x,c,d': more than 3 names");
}

TEST(Hostlist, RejectsOverlongNumbers) {
  EXPECT_NE(expand_error("n[0000000000000000001]").find("digits"), std::string::npos);
}

TEST(Hostlist, ErrorMessageIsOneLineAndBounded) {
  std::string text = "a\nb[" + std::string(500, '1');
  auto msg = expand_error(text);
  EXPECT_EQ(msg.find('\n'), std::string::npos);
  EXPECT_LT(msg.size(), 200u);
}

TEST(Hostlist, ControlCharactersInsideBracketsStayOutOfTheMessage) {
  // Found by hostlist_fuzz: a newline inside brackets does not separate, and the item quoted in
  // the message must not break the one-line rule.
  auto msg = expand_error(std::string("r1[-\0\n-02]", 10));
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\0'), std::string::npos) << msg;
}

TEST(PerNodeCounts, ExpandsRepeatGroups) {
  auto r = expand_per_node_counts("2(x3),1");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(*r, (std::vector<int>{2, 2, 2, 1}));
  EXPECT_EQ(*expand_per_node_counts("8"), std::vector<int>{8});
}

TEST(PerNodeCounts, CapsTheNumberOfCounts) {
  EXPECT_EQ(expand_per_node_counts("1(x1000000)")->size(), k_max_hostlist_names);
  EXPECT_FALSE(expand_per_node_counts("1(x1000000),2").has_value());
  const HostlistLimits small{.max_names = 4};
  EXPECT_EQ(expand_per_node_counts("1(x3),2", small)->size(), 4u);
  auto r = expand_per_node_counts("1(x3),2(x2)", small);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message,
            "per-node counts '1(x3),2(x2)': expected N or N(xM) items, got '2(x2)'");
}

TEST(PerNodeCounts, RejectsMalformedItems) {
  for (const char* text : {"", "x", "2(x0)", "2(x)", "-1", "2(3)"}) {
    EXPECT_FALSE(expand_per_node_counts(text).has_value()) << text;
  }
}

}  // namespace
}  // namespace ddprun::sched
