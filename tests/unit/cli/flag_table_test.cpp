// The flag table against the spec (torchrun.md §1.2, §1.4 and the ddprun extras), written out
// independently of src/cli so a typo in either place fails here. Every spelling of every
// option is parsed into its dest; defaults and environment fallbacks are checked per option.
#include "ddprun/cli/args.hpp"
#include "ddprun/cli/flags.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace ddprun::cli {
namespace {

struct Expected {
  std::string dest;
  std::vector<std::string> spellings;
  bool boolean;
  std::string default_value;
  std::string env_var;  // "" when the option reads no environment variable
};

const std::vector<Expected>& expected_flags() {
  static const std::vector<Expected> flags = {
      {"nnodes", {"--nnodes"}, false, "1:1", "PET_NNODES"},
      {"nproc_per_node",
       {"--nproc-per-node", "--nproc_per_node"},
       false,
       "1",
       "PET_NPROC_PER_NODE"},
      {"rdzv_backend", {"--rdzv-backend", "--rdzv_backend"}, false, "static", "PET_RDZV_BACKEND"},
      {"rdzv_endpoint", {"--rdzv-endpoint", "--rdzv_endpoint"}, false, "", "PET_RDZV_ENDPOINT"},
      {"rdzv_id", {"--rdzv-id", "--rdzv_id"}, false, "none", "PET_RDZV_ID"},
      {"rdzv_conf", {"--rdzv-conf", "--rdzv_conf"}, false, "", "PET_RDZV_CONF"},
      {"standalone", {"--standalone"}, true, "0", "PET_STANDALONE"},
      {"max_restarts", {"--max-restarts", "--max_restarts"}, false, "0", "PET_MAX_RESTARTS"},
      {"monitor_interval",
       {"--monitor-interval", "--monitor_interval"},
       false,
       "0.1",
       "PET_MONITOR_INTERVAL"},
      {"start_method", {"--start-method", "--start_method"}, false, "spawn", "PET_START_METHOD"},
      {"virtual_local_rank",
       {"--virtual-local-rank", "--virtual_local_rank"},
       true,
       "0",
       "PET_VIRTUAL_LOCAL_RANK"},
      {"event_log_handler",
       {"--event-log-handler", "--event_log_handler"},
       false,
       "null",
       "PET_EVENT_LOG_HANDLER"},
      {"role", {"--role"}, false, "default", "PET_ROLE"},
      {"module", {"-m", "--module"}, true, "0", "PET_MODULE"},
      {"no_python", {"--no-python", "--no_python"}, true, "0", "PET_NO_PYTHON"},
      {"run_path", {"--run-path", "--run_path"}, true, "0", "PET_RUN_PATH"},
      {"log_dir", {"--log-dir", "--log_dir"}, false, "", "PET_LOG_DIR"},
      {"redirects", {"-r", "--redirects"}, false, "0", "PET_REDIRECTS"},
      {"tee", {"-t", "--tee"}, false, "0", "PET_TEE"},
      {"local_ranks_filter",
       {"--local-ranks-filter", "--local_ranks_filter"},
       false,
       "",
       "PET_LOCAL_RANKS_FILTER"},
      {"node_rank", {"--node-rank", "--node_rank"}, false, "0", "PET_NODE_RANK"},
      {"master_addr", {"--master-addr", "--master_addr"}, false, "127.0.0.1", "PET_MASTER_ADDR"},
      {"master_port", {"--master-port", "--master_port"}, false, "29500", "PET_MASTER_PORT"},
      {"local_addr", {"--local-addr", "--local_addr"}, false, "", "PET_LOCAL_ADDR"},
      {"logs_specs", {"--logs-specs", "--logs_specs"}, false, "", ""},
      {"duplicate_stdout_filters",
       {"--duplicate-stdout-filters", "--duplicate_stdout_filters"},
       false,
       "",
       "PET_DUPLICATE_STDOUT_FILTERS"},
      {"duplicate_stderr_filters",
       {"--duplicate-stderr-filters", "--duplicate_stderr_filters"},
       false,
       "",
       "PET_DUPLICATE_STDERR_FILTERS"},
      {"numa_binding", {"--numa-binding", "--numa_binding"}, false, "", ""},
      {"signals_to_handle",
       {"--signals-to-handle", "--signals_to_handle"},
       false,
       "SIGTERM,SIGINT,SIGHUP,SIGQUIT",
       "PET_SIGNALS_TO_HANDLE"},
      // ddprun extras and the legacy launcher's --use-env.
      {"python", {"--python"}, false, "", ""},
      {"use_env", {"--use-env", "--use_env"}, true, "0", ""},
      {"legacy_local_rank", {"--legacy-local-rank", "--legacy_local_rank"}, true, "0", ""},
      {"local_rank_arg", {"--local-rank-arg", "--local_rank_arg"}, false, "underscore", ""},
      {"print_config", {"--print-config", "--print_config"}, true, "0", ""},
      {"log_level", {"--log-level", "--log_level"}, false, "WARNING", "LOGLEVEL"},
      {"shutdown_timeout",
       {"--shutdown-timeout", "--shutdown_timeout"},
       false,
       "30",
       "TORCH_ELASTIC_SHUTDOWN_TIMEOUT"},
      {"events_file", {"--events-file", "--events_file"}, false, "", ""},
      {"line_output", {"--line-output", "--line_output"}, false, "auto", "DDPRUN_LINE_OUTPUT"},
      {"metrics_port", {"--metrics-port", "--metrics_port"}, false, "", "DDPRUN_METRICS_PORT"},
      {"stacks_on_failure", {"--stacks-on-failure", "--stacks_on_failure"}, true, "0", ""},
      {"stall_timeout", {"--stall-timeout", "--stall_timeout"}, false, "0", "PET_STALL_TIMEOUT"},
      {"crash_loop_limit", {"--crash-loop-limit", "--crash_loop_limit"}, false, "0", ""},
      {"crash_loop_window", {"--crash-loop-window", "--crash_loop_window"}, false, "300", ""},
      {"segment", {"--segment"}, false, "0", "PET_SEGMENT"},
      {"stall_startup_timeout",
       {"--stall-startup-timeout", "--stall_startup_timeout"},
       false,
       "1800",
       ""},
      {"stall_timeout_floor", {"--stall-timeout-floor", "--stall_timeout_floor"}, false, "60", ""},
      {"health_check", {"--health-check", "--health_check"}, false, "", "PET_HEALTH_CHECK"},
      {"health_check_timeout",
       {"--health-check-timeout", "--health_check_timeout"},
       false,
       "60",
       "PET_HEALTH_CHECK_TIMEOUT"},
      {"health_check_interval",
       {"--health-check-interval", "--health_check_interval"},
       false,
       "0",
       "PET_HEALTH_CHECK_INTERVAL"},
      {"gpu_memory_wait",
       {"--gpu-memory-wait", "--gpu_memory_wait"},
       false,
       "50",
       "PET_GPU_MEMORY_WAIT"},
      {"gpu_memory_tolerance",
       {"--gpu-memory-tolerance", "--gpu_memory_tolerance"},
       false,
       "512",
       "PET_GPU_MEMORY_TOLERANCE"},
      {"agent_store", {"--agent-store", "--agent_store"}, false, "auto", ""},
      {"no_auto", {"--no-auto", "--no_auto"}, true, "0", ""},
      {"launcher", {"--launcher"}, false, "auto", ""},
      {"omp_threads", {"--omp-threads", "--omp_threads"}, false, "torchrun", ""},
      {"pin_gpus", {"--pin-gpus", "--pin_gpus"}, true, "0", ""},
  };
  return flags;
}

// A value the option accepts that differs from its default.
std::string sample_value(const std::string& dest) {
  for (const auto& flag : flag_table()) {
    if (flag.dest.name() == dest && !flag.choices.empty()) {
      return std::string(flag.choices.back());
    }
  }
  return "v-" + dest;
}

// The table's key for a dest of the spec list above (the table's own constant).
FlagKey key_of(const std::string& dest) {
  for (const auto& flag : flag_table()) {
    if (flag.dest.name() == dest) {
      return flag.dest;
    }
  }
  ADD_FAILURE() << "no option " << dest;
  return flag::k_help;
}

Result<ParsedArgs> parse(const std::vector<std::string>& args, const util::Env& env = {}) {
  return parse_args(args, env);
}

// Keys are never made implicitly from text, so a misspelt lookup such as
// args.at("nnodez") does not compile; code names options through flag::k_*.
static_assert(!std::is_convertible_v<const char*, FlagKey>);
static_assert(!std::is_convertible_v<std::string, FlagKey>);
static_assert(!std::is_invocable_v<decltype(&ParsedArgs::at), const ParsedArgs&, const char*>);
static_assert(!std::is_invocable_v<decltype(&ParsedArgs::flag_on), const ParsedArgs&, std::string>);

TEST(FlagTable, MatchesTheSpecExactly) {
  std::set<std::string> expected_dests;
  for (const auto& e : expected_flags()) {
    expected_dests.insert(e.dest);
  }
  std::set<std::string> table_dests;
  for (const auto& flag : flag_table()) {
    if (flag.kind == FlagKind::valued || flag.kind == FlagKind::boolean) {
      EXPECT_TRUE(table_dests.insert(std::string(flag.dest.name())).second) << flag.dest.name();
    }
  }
  EXPECT_EQ(table_dests, expected_dests);
}

TEST(FlagTable, FlagSpecFindsEveryRowByItsKey) {
  for (const auto& flag : flag_table()) {
    EXPECT_EQ(&flag_spec(flag.dest), &flag) << flag.dest.name();
  }
  EXPECT_EQ(flag_spec(flag::k_start_method).choices,
            (std::vector<std::string_view>{"spawn", "fork", "forkserver"}));
}

TEST(FlagTable, EverySpellingIsUnique) {
  std::set<std::string_view> seen;
  for (const auto& flag : flag_table()) {
    for (auto s : flag.spellings) {
      EXPECT_TRUE(seen.insert(s).second) << s;
    }
  }
}

TEST(FlagTable, EveryMultiWordFlagHasDashAndUnderscoreSpellings) {
  for (const auto& flag : flag_table()) {
    std::string dest(flag.dest.name());
    if (dest.find('_') == std::string::npos) {
      continue;
    }
    std::string dashed = dest;
    std::replace(dashed.begin(), dashed.end(), '_', '-');
    std::vector<std::string> spellings(flag.spellings.begin(), flag.spellings.end());
    EXPECT_NE(std::find(spellings.begin(), spellings.end(), "--" + dashed), spellings.end());
    EXPECT_NE(std::find(spellings.begin(), spellings.end(), "--" + dest), spellings.end());
  }
}

TEST(FlagTable, EveryEntryHasHelpAndValuedEntriesHaveAMetavar) {
  for (const auto& flag : flag_table()) {
    EXPECT_FALSE(flag.help.empty()) << flag.dest.name();
    if (flag.kind == FlagKind::valued) {
      EXPECT_FALSE(flag.metavar.empty()) << flag.dest.name();
    }
  }
}

TEST(FlagTable, DefaultsWhenNothingIsGiven) {
  auto r = parse({"train.py"});
  ASSERT_TRUE(r) << r.error().message;
  for (const auto& e : expected_flags()) {
    const auto& s = r->at(key_of(e.dest));
    EXPECT_EQ(s.value, e.default_value) << e.dest;
    EXPECT_EQ(s.origin, Origin::default_value) << e.dest;
    EXPECT_EQ(s.source, "default") << e.dest;
  }
}

TEST(FlagTable, EverySpellingSetsItsDestWithSpaceAndEqualsForms) {
  for (const auto& e : expected_flags()) {
    for (const auto& spelling : e.spellings) {
      if (e.boolean) {
        auto r = parse({spelling, "train.py"});
        ASSERT_TRUE(r) << spelling << ": " << r.error().message;
        EXPECT_EQ(r->at(key_of(e.dest)).value, "1") << spelling;
        EXPECT_EQ(r->at(key_of(e.dest)).origin, Origin::flag) << spelling;
        EXPECT_EQ(r->at(key_of(e.dest)).source, spelling);
        continue;
      }
      auto value = sample_value(e.dest);
      std::string joined = spelling;
      joined.append("=").append(value);
      for (const auto& args : {std::vector<std::string>{spelling, value, "train.py"},
                               std::vector<std::string>{joined, "train.py"}}) {
        auto r = parse(args);
        ASSERT_TRUE(r) << args[0] << ": " << r.error().message;
        EXPECT_EQ(r->at(key_of(e.dest)).value, value) << args[0];
        EXPECT_EQ(r->at(key_of(e.dest)).origin, Origin::flag) << args[0];
        EXPECT_EQ(r->at(key_of(e.dest)).source, spelling) << args[0];
        EXPECT_EQ(r->training_script, "train.py");
      }
    }
  }
}

TEST(FlagTable, EnvironmentFallbackPerOption) {
  for (const auto& e : expected_flags()) {
    if (e.env_var.empty()) {
      continue;
    }
    std::string value = e.boolean ? "1" : sample_value(e.dest);
    auto r = parse({"train.py"}, util::Env{{e.env_var, value}});
    ASSERT_TRUE(r) << e.env_var << ": " << r.error().message;
    EXPECT_EQ(r->at(key_of(e.dest)).value, value) << e.env_var;
    EXPECT_EQ(r->at(key_of(e.dest)).origin, Origin::env) << e.env_var;
    EXPECT_EQ(r->at(key_of(e.dest)).source, e.env_var);
  }
}

TEST(FlagTable, OptionsWithoutEnvIgnoreAPetVariable) {
  util::Env env{{"PET_LOGS_SPECS", "x"},
                {"PET_NUMA_BINDING", "node"},
                {"PET_PYTHON", "p"},
                {"PET_USE_ENV", "1"},
                {"PET_AGENT_STORE", "on"}};
  auto r = parse({"train.py"}, env);
  ASSERT_TRUE(r) << r.error().message;
  for (auto dest : {flag::k_logs_specs, flag::k_numa_binding, flag::k_python, flag::k_use_env,
                    flag::k_agent_store}) {
    EXPECT_EQ(r->at(dest).origin, Origin::default_value) << dest.name();
  }
}

}  // namespace
}  // namespace ddprun::cli
