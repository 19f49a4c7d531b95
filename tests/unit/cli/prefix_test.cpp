// Unique-prefix abbreviation of long options, as argparse's allow_abbrev does it: on the real
// table, and on small synthetic tables for the exact-match-wins rule.
#include "ddprun/cli/flags.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ddprun::cli {
namespace {

using Args = std::vector<std::string>;

Result<ParsedArgs> parse(const Args& args) { return parse_args(args, util::Env{}); }

TEST(Abbreviation, UniquePrefixesSelectTheOption) {
  auto r = parse(
      {"--nnode=1", "--nproc=2", "--max_r", "1", "--stand", "--rdzv-b", "c10d", "--no-p", "x"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at(flag::k_nnodes).value, "1");
  EXPECT_EQ(r->at(flag::k_nproc_per_node).value, "2");
  EXPECT_EQ(r->at(flag::k_max_restarts).value, "1");
  EXPECT_TRUE(r->flag_on(flag::k_standalone));
  EXPECT_EQ(r->at(flag::k_rdzv_backend).value, "c10d");
  EXPECT_TRUE(r->flag_on(flag::k_no_python));
}

TEST(Abbreviation, SourceIsTheFullSpellingNotTheAbbreviation) {
  auto r = parse({"--max_r", "1", "--nproc=2", "x"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at(flag::k_max_restarts).source, "--max_restarts");
  EXPECT_EQ(r->at(flag::k_nproc_per_node).source, "--nproc-per-node");
}

TEST(Abbreviation, PrefixSharedByBothSpellingsOfOneOptionIsNotAmbiguous) {
  auto r = parse({"--rdzv-e", "h:1", "--rdzv_i", "job", "x"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at(flag::k_rdzv_endpoint).value, "h:1");
  EXPECT_EQ(r->at(flag::k_rdzv_id).value, "job");
}

TEST(Abbreviation, AmbiguousPrefixListsEveryCandidate) {
  auto r = parse({"--n", "2", "x"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::usage);
  EXPECT_EQ(r.error().message,
            "ambiguous option: --n could match --nnodes, --nproc-per-node, --nproc_per_node, "
            "--node-rank, --node_rank, --numa-binding, --numa_binding, --no-python, --no_python, "
            "--no-auto, --no_auto");
}

TEST(Abbreviation, TorchrunPrefixesStayUnique) {
  // ddprun's own flags must not make a prefix that was unique for torchrun ambiguous.
  auto r = parse({"--no_py", "--nproc=2", "--max_r", "1", "--nnode=1", "x"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at(flag::k_no_python).value, "1");
  EXPECT_EQ(r->at(flag::k_nproc_per_node).value, "2");
}

TEST(Abbreviation, AmbiguousPrefixWithValueNamesOnlyTheOption) {
  auto r = parse({"--rdzv=c10d", "x"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message.rfind("ambiguous option: --rdzv could match --rdzv-backend, ", 0), 0U)
      << r.error().message;
}

TEST(Abbreviation, AmbiguousPrefixWhereAValueIsExpected) {
  auto r = parse({"--role", "--lo", "x"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "option '--role' expects a value (ROLE), got '--lo'");
}

TEST(Abbreviation, ShortOptionsAreNeverPrefixMatched) {
  auto r = parse({"-mo", "x"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "option '-m' takes no value (got 'o')");
}

constexpr FlagKey k_nnodes_foo{"nnodes_foo"};
constexpr FlagKey k_dry{"dry"};
constexpr FlagKey k_dry_run{"dry_run"};

std::vector<FlagSpec> conflicting_table() {
  return {
      {flag::k_nnodes, {"--nnodes"}, FlagKind::valued, "1", "", "N", {}, FlagGroup::nodes, "n"},
      {k_nnodes_foo,
       {"--nnodes-foo", "--nnodes_foo"},
       FlagKind::valued,
       "f",
       "",
       "F",
       {},
       FlagGroup::nodes,
       "f"},
      {k_dry, {"--dry"}, FlagKind::boolean, "0", "", "", {}, FlagGroup::nodes, "d"},
      {k_dry_run, {"--dry-run"}, FlagKind::boolean, "0", "", "", {}, FlagGroup::nodes, "r"},
  };
}

TEST(Abbreviation, ExactSpellingWinsOverLongerOptions) {
  auto table = conflicting_table();
  auto r = parse_args_with(table, {"--nnodes", "4", "--dry", "x"}, util::Env{});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at(flag::k_nnodes).value, "4");
  EXPECT_EQ(r->at(k_nnodes_foo).value, "f");
  EXPECT_TRUE(r->flag_on(k_dry));
  EXPECT_FALSE(r->flag_on(k_dry_run));
}

TEST(Abbreviation, ExactSpellingWithEqualsWinsOverLongerOptions) {
  auto table = conflicting_table();
  auto r = parse_args_with(table, {"--nnodes=4", "x"}, util::Env{});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at(flag::k_nnodes).value, "4");
}

TEST(Abbreviation, PrefixOfTheShorterOptionIsAmbiguousInAConflictingTable) {
  auto table = conflicting_table();
  auto r = parse_args_with(table, {"--nno=4", "x"}, util::Env{});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "ambiguous option: --nno could match --nnodes, --nnodes-foo, --nnodes_foo");
  auto longer = parse_args_with(table, {"--nnodes_f=4", "x"}, util::Env{});
  ASSERT_TRUE(longer) << longer.error().message;
  EXPECT_EQ(longer->at(k_nnodes_foo).value, "4");
}

}  // namespace
}  // namespace ddprun::cli
