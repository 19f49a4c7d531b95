// argparse behaviour of parse_args on the real table: value forms, short options, REMAINDER,
// "--", PET_ defaults and every usage error.
#include "ddprun/cli/args.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ddprun::cli {
namespace {

using Args = std::vector<std::string>;

Result<ParsedArgs> parse(const Args& args, const util::Env& env = {}) {
  return parse_args(args, env);
}

std::string error_of(const Args& args, const util::Env& env = {}) {
  auto r = parse(args, env);
  if (r) {
    return "<no error>";
  }
  EXPECT_EQ(r.error().code, ErrorCode::usage);
  return r.error().message;
}

TEST(ParseArgs, ScriptAndItsArgumentsAreSplitOff) {
  auto r = parse({"--nnodes", "2", "train.py", "--lr", "0.1"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->training_script, "train.py");
  EXPECT_EQ(r->training_script_args, (Args{"--lr", "0.1"}));
  EXPECT_EQ(r->at(flag::k_nnodes).value, "2");
}

TEST(ParseArgs, RemainderKeepsLauncherLookingFlagsForTheWorker) {
  auto r = parse({"--nproc_per_node=1", "--no_python", "/bin/echo", "--nproc_per_node=5", "-h",
                  "--", "--version", "--bogus"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->training_script, "/bin/echo");
  EXPECT_EQ(r->training_script_args,
            (Args{"--nproc_per_node=5", "-h", "--", "--version", "--bogus"}));
  EXPECT_EQ(r->at(flag::k_nproc_per_node).value, "1");
  EXPECT_TRUE(r->flag_on(flag::k_no_python));
  EXPECT_FALSE(r->help);
  EXPECT_FALSE(r->version);
}

// CPython's argparse classifies every token up front, so an ambiguous prefix such as "--n"
// in the worker's arguments kills torchrun; ddprun never looks past the script.
TEST(ParseArgs, RemainderIsNotCheckedForAmbiguousPrefixes) {
  auto r = parse({"train.py", "--n", "--nproc", "-x"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->training_script_args, (Args{"--n", "--nproc", "-x"}));
}

TEST(ParseArgs, SeparatorBeforeScriptIsDropped) {
  auto r = parse({"--nnodes=2", "--", "train.py", "--", "x"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->training_script, "train.py");
  EXPECT_EQ(r->training_script_args, (Args{"--", "x"}));
}

TEST(ParseArgs, SeparatorMakesADashedNameTheScript) {
  auto r = parse({"--", "--weird-script", "a"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->training_script, "--weird-script");
  EXPECT_EQ(r->training_script_args, Args{"a"});
}

TEST(ParseArgs, SeparatorWithNothingAfterItStillNeedsAScript) {
  EXPECT_EQ(error_of({"--"}),
            "the following arguments are required: training_script, training_script_args");
}

TEST(ParseArgs, SingleDashIsAPositional) {
  auto r = parse({"-"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->training_script, "-");
}

TEST(ParseArgs, ShortOptionsTakeSpacedGluedOrEqualsValues) {
  for (const auto& args : {Args{"-r", "3", "x"}, Args{"-r3", "x"}, Args{"-r=3", "x"}}) {
    auto r = parse(args);
    ASSERT_TRUE(r) << args[0] << ": " << r.error().message;
    EXPECT_EQ(r->at(flag::k_redirects).value, "3") << args[0];
    EXPECT_EQ(r->at(flag::k_redirects).source, "-r");
  }
  auto r = parse({"-t", "0:3,1:1", "-m", "pkg.main"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at(flag::k_tee).value, "0:3,1:1");
  EXPECT_TRUE(r->flag_on(flag::k_module));
  EXPECT_EQ(r->training_script, "pkg.main");
}

TEST(ParseArgs, ShortBooleanClustersWithFollowingShortOptions) {
  auto glued = parse({"-mr3", "pkg"});
  ASSERT_TRUE(glued) << glued.error().message;
  EXPECT_TRUE(glued->flag_on(flag::k_module));
  EXPECT_EQ(glued->at(flag::k_redirects).value, "3");
  auto equals = parse({"-mr=3", "pkg"});
  ASSERT_TRUE(equals) << equals.error().message;
  EXPECT_EQ(equals->at(flag::k_redirects).value, "3");
  auto spaced = parse({"-mt", "2", "pkg"});
  ASSERT_TRUE(spaced) << spaced.error().message;
  EXPECT_TRUE(spaced->flag_on(flag::k_module));
  EXPECT_EQ(spaced->at(flag::k_tee).value, "2");
  EXPECT_EQ(spaced->training_script, "pkg");
}

TEST(ParseArgs, ShortBooleanGluedToUnknownTextIsAnError) {
  EXPECT_EQ(error_of({"-mx", "pkg"}), "option '-m' takes no value (got 'x')");
}

TEST(ParseArgs, LastOccurrenceWins) {
  auto r = parse({"--nnodes=2", "--nnodes", "3", "x"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at(flag::k_nnodes).value, "3");
}

TEST(ParseArgs, EmptyValueAfterEqualsIsKept) {
  auto r = parse({"--rdzv-endpoint=", "x"}, util::Env{{"PET_RDZV_ENDPOINT", "h:1"}});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at(flag::k_rdzv_endpoint).value, "");
  EXPECT_EQ(r->at(flag::k_rdzv_endpoint).origin, Origin::flag);
}

TEST(ParseArgs, NegativeNumbersAndSpacedTextAreValues) {
  auto r = parse({"--node-rank", "-1", "--rdzv-conf", "-a b", "x"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at(flag::k_node_rank).value, "-1");
  EXPECT_EQ(r->at(flag::k_rdzv_conf).value, "-a b");
}

TEST(ParseArgs, MissingValueAtEndNamesTheFlag) {
  EXPECT_EQ(error_of({"--nnodes"}), "option '--nnodes' expects a value (MIN:MAX)");
  EXPECT_EQ(error_of({"-r"}), "option '-r' expects a value (STD)");
}

TEST(ParseArgs, OptionWhereValueShouldBeIsAnError) {
  EXPECT_EQ(error_of({"--nproc_per_node", "--standalone", "x"}),
            "option '--nproc_per_node' expects a value (NPROC), got '--standalone'");
  EXPECT_EQ(error_of({"--nnodes", "--", "x"}),
            "option '--nnodes' expects a value (MIN:MAX), got '--'");
  EXPECT_EQ(error_of({"--role", "--bogus", "x"}),
            "option '--role' expects a value (ROLE), got '--bogus'");
}

TEST(ParseArgs, BooleanWithValueIsAnError) {
  EXPECT_EQ(error_of({"--standalone=1", "x"}), "option '--standalone' takes no value (got '1')");
  EXPECT_EQ(error_of({"--no-python=", "x"}), "option '--no-python' takes no value (got '')");
  EXPECT_EQ(error_of({"-m=1", "x"}), "option '-m' takes no value (got '1')");
  EXPECT_EQ(error_of({"--stand=yes", "x"}), "option '--standalone' takes no value (got 'yes')");
}

TEST(ParseArgs, UnknownOptionIsAnErrorAndNeverTheScript) {
  EXPECT_EQ(error_of({"--foo", "train.py"}), "unrecognized option '--foo' (see ddprun --help)");
  EXPECT_EQ(error_of({"--nprocs-per-node=2", "train.py"}),
            "unrecognized option '--nprocs-per-node=2' (see ddprun --help)");
  EXPECT_EQ(error_of({"-x"}), "unrecognized option '-x' (see ddprun --help)");
  EXPECT_EQ(error_of({"--foo"}), "unrecognized option '--foo' (see ddprun --help)");
  EXPECT_EQ(error_of({"-nproc_per_node=2", "x"}),
            "unrecognized option '-nproc_per_node=2' (see ddprun --help)");
}

TEST(ParseArgs, DashLedTokenWithASpaceIsNotTheScript) {
  EXPECT_EQ(error_of({"--nproc 2", "x"}), "unrecognized option '--nproc 2' (see ddprun --help)");
}

TEST(ParseArgs, UnknownOptionReportsTheFirstOne) {
  EXPECT_EQ(error_of({"--foo", "--bar", "x"}), "unrecognized option '--foo' (see ddprun --help)");
}

TEST(ParseArgs, MissingScriptIsTheArgparseError) {
  const std::string msg =
      "the following arguments are required: training_script, training_script_args";
  EXPECT_EQ(error_of({}), msg);
  EXPECT_EQ(error_of({"--nnodes=2", "--standalone"}), msg);
}

TEST(ParseArgs, PrintConfigNeedsNoScript) {
  auto r = parse({"--print-config", "--nnodes=2"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->flag_on(flag::k_print_config));
  EXPECT_FALSE(r->training_script.has_value());
}

TEST(ParseArgs, HelpStopsParsingAndNeedsNoScript) {
  for (const auto& args : {Args{"-h"}, Args{"--help"}, Args{"--nnodes=2", "--hel"},
                           Args{"--bogus", "-h"}, Args{"-h", "--nnodes"}}) {
    auto r = parse(args);
    ASSERT_TRUE(r) << args[0] << ": " << r.error().message;
    EXPECT_TRUE(r->help);
    EXPECT_FALSE(r->training_script.has_value());
    EXPECT_EQ(r->at(flag::k_nproc_per_node).value, "1");  // settings are still complete
  }
}

TEST(ParseArgs, HeIsAmbiguousSinceTheHealthCheckOptions) {
  auto r = parse({"--he"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("ambiguous option: --he could match --health-check"),
            std::string::npos)
      << r.error().message;
}

TEST(ParseArgs, VersionStopsParsingAndNeedsNoScript) {
  auto r = parse({"--version"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->version);
  EXPECT_FALSE(r->help);
  EXPECT_EQ(error_of({"--version=2"}), "option '--version' takes no value (got '2')");
}

TEST(ParseArgs, HelpAndVersionIgnoreABadEnvironment) {
  auto r = parse({"--help"}, util::Env{{"PET_STANDALONE", "yes"}});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->help);
  EXPECT_EQ(r->at(flag::k_standalone).value, "0");
}

TEST(ParseArgs, ChoicesAreCheckedForFlags) {
  EXPECT_EQ(error_of({"--start-method", "thread", "x"}),
            "invalid value 'thread' for --start-method (choose from spawn, fork, forkserver)");
  EXPECT_EQ(error_of({"--agent-store=maybe", "x"}),
            "invalid value 'maybe' for --agent-store (choose from auto, on, off)");
  EXPECT_EQ(error_of({"--local-rank-arg=camel", "x"}),
            "invalid value 'camel' for --local-rank-arg (choose from underscore, dash)");
}

// argparse does not check a default (which PET_* variables are) against the choices; resolve
// decides what an unusable one means.
TEST(ParseArgs, ChoicesAreNotCheckedForEnvironmentValues) {
  auto r = parse({"x"}, util::Env{{"PET_START_METHOD", "thread"}});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at(flag::k_start_method).value, "thread");
  EXPECT_EQ(r->at(flag::k_start_method).origin, Origin::env);
}

TEST(PetEnv, ValuedOptionTakesNonEmptyEnvValue) {
  auto r = parse({"x"}, util::Env{{"PET_NPROC_PER_NODE", "3"}, {"PET_NNODES", ""}});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at(flag::k_nproc_per_node).value, "3");
  EXPECT_EQ(r->at(flag::k_nproc_per_node).origin, Origin::env);
  EXPECT_EQ(r->at(flag::k_nproc_per_node).source, "PET_NPROC_PER_NODE");
  EXPECT_EQ(r->at(flag::k_nnodes).value, "1:1");
  EXPECT_EQ(r->at(flag::k_nnodes).origin, Origin::default_value);
}

TEST(PetEnv, ExplicitFlagWinsOverEnv) {
  util::Env env{{"PET_NPROC_PER_NODE", "3"}, {"PET_STANDALONE", "0"}};
  auto r = parse({"--nproc=2", "--standalone", "x"}, env);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at(flag::k_nproc_per_node).value, "2");
  EXPECT_EQ(r->at(flag::k_nproc_per_node).origin, Origin::flag);
  EXPECT_TRUE(r->flag_on(flag::k_standalone));
  EXPECT_EQ(r->at(flag::k_standalone).source, "--standalone");
}

TEST(PetEnv, BooleanUsesPythonIntSemantics) {
  struct Case {
    std::string text;
    std::string value;
  };
  for (const auto& c :
       {Case{"1", "1"}, Case{"0", "0"}, Case{"2", "1"}, Case{"-1", "1"}, Case{" 1 ", "1"},
        Case{"00", "0"}, Case{"+0", "0"}, Case{"1_0", "1"}, Case{"0_0", "0"}}) {
    auto r = parse({"x"}, util::Env{{"PET_STANDALONE", c.text}});
    ASSERT_TRUE(r) << "'" << c.text << "': " << r.error().message;
    EXPECT_EQ(r->at(flag::k_standalone).value, c.value) << "'" << c.text << "'";
    EXPECT_EQ(r->at(flag::k_standalone).origin, Origin::env);
  }
}

TEST(PetEnv, BooleanEnvThatIsNotAnIntegerIsAnError) {
  for (const auto* text : {"yes", "true", "1.0", "1__0", "_1", "1_", "--1", "0x1"}) {
    EXPECT_EQ(error_of({"x"}, util::Env{{"PET_NO_PYTHON", text}}),
              std::string("invalid value '") + text +
                  "' in PET_NO_PYTHON (expected an integer: 0 is off, non-zero is on)");
  }
}

TEST(PetEnv, ExplicitBooleanFlagSkipsABadEnvValue) {
  auto r = parse({"--standalone", "x"}, util::Env{{"PET_STANDALONE", "yes"}});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->flag_on(flag::k_standalone));
}

TEST(PetEnv, EmptyBooleanEnvIsIgnored) {
  auto r = parse({"x"}, util::Env{{"PET_MODULE", ""}});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at(flag::k_module).origin, Origin::default_value);
}

TEST(PetEnv, StandaloneAndNprocFromEnvLikeTheSpecRun) {
  auto r =
      parse({"--no_python", "x"}, util::Env{{"PET_NPROC_PER_NODE", "3"}, {"PET_STANDALONE", "1"}});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at(flag::k_nproc_per_node).value, "3");
  EXPECT_TRUE(r->flag_on(flag::k_standalone));
}

TEST(OwnEnv, LogLevelAndShutdownTimeoutReadTorchVariables) {
  util::Env env{{"LOGLEVEL", "INFO"}, {"TORCH_ELASTIC_SHUTDOWN_TIMEOUT", "5"}};
  auto r = parse({"x"}, env);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at(flag::k_log_level).value, "INFO");
  EXPECT_EQ(r->at(flag::k_log_level).source, "LOGLEVEL");
  EXPECT_EQ(r->at(flag::k_shutdown_timeout).value, "5");
  auto flag = parse({"--log-level=DEBUG", "x"}, env);
  ASSERT_TRUE(flag) << flag.error().message;
  EXPECT_EQ(flag->at(flag::k_log_level).value, "DEBUG");
}

}  // namespace
}  // namespace ddprun::cli
