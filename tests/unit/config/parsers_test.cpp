#include "ddprun/cli/args.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/config/rendezvous_hint.hpp"
#include "ddprun/config/rendezvous_policy.hpp"
#include "ddprun/sched/detect.hpp"
#include "ddprun/util/strings.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <map>
#include <set>

using namespace ddprun;
using namespace ddprun::config;

namespace {

HostFacts host_facts(int cpus, int gpus, const std::string& run_id, const std::string& gpu_source) {
  HostFacts host;
  host.cpu_count = cpus;
  host.gpu_count = gpus;
  host.random_run_id = run_id;
  host.gpu_source = gpu_source;
  return host;
}

}  // namespace

TEST(ParseNnodes, SingleAndRange) {
  EXPECT_EQ(parse_nnodes("2")->min, 2);
  EXPECT_EQ(parse_nnodes("2")->max, 2);
  EXPECT_EQ(parse_nnodes("1:4")->max, 4);
  for (const char* bad : {"0", "4:2", "1:2:3", "x", "", "-1", "1:"}) {
    EXPECT_FALSE(parse_nnodes(bad)) << bad;
  }
  EXPECT_NE(parse_nnodes("1:2:3").error().message.find("'1:2:3'"), std::string::npos);
}

TEST(ParseRdzvConf, SplitsAndStrips) {
  auto conf = parse_rdzv_conf(" join_timeout = 5 ,is_host=1");
  ASSERT_TRUE(conf);
  EXPECT_EQ(conf->at("join_timeout"), "5");
  EXPECT_EQ(conf->at("is_host"), "1");
  EXPECT_TRUE(parse_rdzv_conf("")->empty());
  EXPECT_FALSE(parse_rdzv_conf("a=1,b"));
  EXPECT_FALSE(parse_rdzv_conf("=1"));
  EXPECT_FALSE(parse_rdzv_conf("a="));
}

TEST(ParseEndpoint, TorchrunRules) {
  struct Row {
    const char* text;
    const char* host;
    int port;
  } rows[] = {{"", "localhost", 29400},        {"node1", "node1", 29400},
              {"node1:1234", "node1", 1234},   {"[::1]:5000", "::1", 5000},
              {"[fe80::1]", "fe80::1", 29400}, {"10.0.0.1:0", "10.0.0.1", 0}};
  for (const auto& r : rows) {
    auto ep = parse_endpoint(r.text, 29400);
    ASSERT_TRUE(ep) << r.text;
    EXPECT_EQ(ep->host, r.host) << r.text;
    EXPECT_EQ(ep->port, r.port) << r.text;
  }
  for (const char* bad : {"host:99999", "host:12ab", "ho st:1", "host:123456"}) {
    EXPECT_FALSE(parse_endpoint(bad, 29400)) << bad;
  }
}

namespace {

/// Whether render_config's `text` has the line "<name><padding> = <rest>" (the padding is the
/// longest item name's, which grows with the settings).
bool has_config_line(const std::string& text, const std::string& name, const std::string& rest) {
  for (std::size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    if (at != 0 && text[at - 1] != '\n') {
      continue;
    }
    const auto eq = text.find_first_not_of(' ', at + name.size());
    if (eq != std::string::npos && text.compare(eq, 2 + rest.size(), "= " + rest) == 0) {
      return true;
    }
  }
  return false;
}

Result<LaunchConfig> resolve_args(const std::vector<std::string>& args, const util::Env& env = {}) {
  auto parsed = cli::parse_args(args, env);
  if (!parsed) {
    return parsed.error();
  }
  const HostFacts host =
      host_facts(8, 2, "11111111-2222-4333-8444-555555555555", "CUDA_VISIBLE_DEVICES");
  return resolve(*parsed, env, host, sched::Detected{});
}

}  // namespace

TEST(Resolve, StandaloneForcesC10dFreePortAndRandomId) {
  auto cfg = resolve_args({"--standalone", "--rdzv_backend=static", "--rdzv_id=x", "t.py"});
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->rdzv.rdzv_backend, RdzvBackend::c10d);
  EXPECT_EQ(cfg->rdzv.rdzv_endpoint.host, "localhost");
  EXPECT_EQ(cfg->rdzv.rdzv_endpoint.port, 0);
  EXPECT_EQ(cfg->rdzv.rdzv_id, "11111111-2222-4333-8444-555555555555");
}

TEST(Resolve, StallTimeoutSecondsOffOrAuto) {
  using namespace std::chrono_literals;
  auto fixed = resolve_args({"--stall-timeout", "90", "t.py"});
  ASSERT_TRUE(fixed) << fixed.error().message;
  EXPECT_EQ(fixed->supervision.stall_timeout, 90s);
  EXPECT_FALSE(fixed->supervision.stall_auto);
  auto off = resolve_args({"--stall-timeout", "0", "t.py"});
  ASSERT_TRUE(off);
  EXPECT_EQ(off->supervision.stall_timeout, 0s);
  EXPECT_FALSE(off->supervision.stall_auto);
  auto learned = resolve_args({"t.py"}, util::Env{{"PET_STALL_TIMEOUT", "auto"}});
  ASSERT_TRUE(learned) << learned.error().message;
  ASSERT_TRUE(learned->supervision.stall_auto);
  EXPECT_EQ(learned->supervision.stall_auto->factor, 5.0);
  EXPECT_EQ(learned->supervision.stall_auto->startup, 1800s);
  EXPECT_EQ(learned->supervision.stall_auto->floor, 60s);
  EXPECT_EQ(learned->supervision.stall_timeout, 1800s)
      << "on, at the start-up bound until it learns";
  auto tuned = resolve_args({"--stall-timeout=auto:2.5", "--stall-startup-timeout=3",
                             "--stall-timeout-floor=0.5", "t.py"});
  ASSERT_TRUE(tuned) << tuned.error().message;
  EXPECT_EQ(tuned->supervision.stall_auto->factor, 2.5);
  EXPECT_EQ(tuned->supervision.stall_auto->startup, 3s);
  EXPECT_EQ(tuned->supervision.stall_auto->floor, 500ms);
  for (const char* bad : {"auto:0", "auto:0.5", "auto:", "auto:x", "auto:5:9", "Auto", "-1"}) {
    auto r = resolve_args({"--stall-timeout", bad, "t.py"});
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("auto or auto:FACTOR"), std::string::npos)
        << r.error().message;
  }
  auto unread = resolve_args({"--stall-timeout=60", "--stall-timeout-floor=5", "t.py"});
  ASSERT_FALSE(unread);
  EXPECT_EQ(unread.error().message,
            "--stall-timeout-floor '5': only --stall-timeout auto reads it (it is '60')");
}

TEST(Resolve, NprocKeywords) {
  EXPECT_EQ(resolve_args({"--nproc_per_node=cpu", "t.py"})->group.nproc_per_node, 8);
  EXPECT_EQ(resolve_args({"--nproc_per_node=gpu", "t.py"})->group.nproc_per_node, 2);
  EXPECT_EQ(resolve_args({"--nproc_per_node=auto", "t.py"})->group.nproc_per_node, 2);
  EXPECT_FALSE(resolve_args({"--nproc_per_node=0", "t.py"}));
  EXPECT_FALSE(resolve_args({"--nproc_per_node=two", "t.py"}));
}

TEST(Resolve, BadValuesNameTheFlagAndValue) {
  struct Row {
    std::vector<std::string> args;
    std::string needle;
  } rows[] = {
      {{"--max_restarts=-1", "t.py"}, "--max-restarts '-1'"},
      {{"--monitor_interval=0", "t.py"}, "--monitor-interval '0'"},
      {{"--master_port=70000", "t.py"}, "--master-port '70000'"},
      {{"--start_method=thread", "t.py"}, "'thread'"},
      {{"--rdzv_backend=etcd", "t.py"}, "--rdzv-backend 'etcd'"},
      {{"--nnodes=2", "--node_rank=2", "t.py"}, "--node-rank '2'"},
      {{"--nproc_per_node=xpu", "t.py"}, "--nproc-per-node 'xpu'"},
      {{"--logs_specs=my_specs", "t.py"}, "--logs-specs 'my_specs': expected default or nothing"},
      {{"-m", "--no_python", "t.py"}, "--no-python"},
  };
  for (const auto& r : rows) {
    auto cfg = resolve_args(r.args);
    ASSERT_FALSE(cfg) << r.needle;
    EXPECT_NE(cfg.error().message.find(r.needle), std::string::npos) << cfg.error().message;
    EXPECT_EQ(cfg.error().code, ErrorCode::usage);
  }
}

// Regressions found by the bad-input table (tests/e2e/bad_input_e2e_test.cpp): values that
// were accepted until a later stage (or for good), and parser errors that named the flag even
// when the value came from the environment.
TEST(Resolve, RejectsWhatLaterStagesUsedToAccept) {
  struct Row {
    util::Env env;
    std::vector<std::string> args;
    std::string message;
  } rows[] = {
      {{},
       {"--event_log_handler=x", "t.py"},
       "--event-log-handler 'x': expected null, console or dynamic_rendezvous"},
      {{},
       {"-r", "4", "t.py"},
       "--redirects '4': expected 0-3 or a per-rank map such as 0:1,1:2 (local ranks 0-9)"},
      {{{"PET_TEE", "0:4"}},
       {"t.py"},
       "PET_TEE '0:4': expected 0-3 or a per-rank map such as 0:1,1:2 (local ranks 0-9)"},
      {{},
       {"--local_ranks_filter=x", "t.py"},
       "--local-ranks-filter 'x': expected a comma-separated list of local ranks such as 0,1"},
      {{},
       {"--master_addr=bad host", "t.py"},
       "--master-addr 'bad host': expected a host name or address"},
      {{}, {"--local_addr=a/b", "t.py"}, "--local-addr 'a/b': expected a host name or address"},
      {{{"PET_NNODES", "3:2"}}, {"t.py"}, "PET_NNODES '3:2': MIN must not be greater than MAX"},
      {{},
       {"--rdzv_endpoint=h:x", "t.py"},
       "--rdzv-endpoint 'h:x': invalid port 'x', expected host[:port] with a port 0-65535"},
      {{{"PET_RDZV_CONF", "a=1,b"}},
       {"t.py"},
       "PET_RDZV_CONF item 'b': expected key=value items (k1=v1,k2=v2)"},
      {{},
       {"--nnodes=2", "--rdzv_backend=c10d", "--rdzv_endpoint=h:29400", "--rdzv_conf=is_host=maybe",
        "t.py"},
       "--rdzv-conf 'is_host=maybe': expected is_host=1, true, t, yes, y or 0, false, f, no, n"},
  };
  for (const auto& r : rows) {
    auto cfg = resolve_args(r.args, r.env);
    ASSERT_FALSE(cfg) << r.message;
    EXPECT_EQ(cfg.error().message, r.message);
  }
}

// torchrun logs and ignores these; ddprun proceeds with one warning line each, naming the value
// and where it came from.
TEST(Resolve, WarnsAboutWhatTorchrunIgnores) {
  auto cfg = resolve_args({"--signals_to_handle=SIGTERM,SIGNOPE", "--logs_specs=default", "t.py"},
                          util::Env{{"PET_RDZV_CONF", "bogus=1"}});
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->supervision.signals_to_handle, std::vector<int>{SIGTERM});
  ASSERT_EQ(cfg->warnings.size(), 2u);
  EXPECT_EQ(cfg->warnings[0].rfind("PET_RDZV_CONF 'bogus=1': ignored, unknown key (ddprun knows "
                                   "join_timeout, ",
                                   0),
            0u)
      << cfg->warnings[0];
  EXPECT_EQ(cfg->warnings[1],
            "--signals-to-handle 'SIGNOPE': ignored, unknown signal 'SIGNOPE' (expected a name "
            "like SIGTERM or a number)");
  EXPECT_TRUE(cfg->rdzv.rdzv_conf.empty());
  auto quiet = resolve_args({"t.py"});
  ASSERT_TRUE(quiet);
  EXPECT_TRUE(quiet->warnings.empty());
}

TEST(Resolve, SourceOfNamesTheVariableOrTheFlag) {
  auto cfg = resolve_args({"--log_dir=/tmp/x", "t.py"}, util::Env{{"PET_RDZV_CONF", "a=1"}});
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(source_of(*cfg, "rdzv_conf"), "PET_RDZV_CONF");
  EXPECT_EQ(source_of(*cfg, "log_dir"), "--log-dir");
  EXPECT_EQ(cfg->output.log_dir_source, "--log-dir");
  auto from_env = resolve_args({"t.py"}, util::Env{{"PET_LOG_DIR", "/tmp/y"}});
  ASSERT_TRUE(from_env) << from_env.error().message;
  EXPECT_EQ(from_env->output.log_dir_source, "PET_LOG_DIR");
}

TEST(Resolve, PythonOriginIsItsPrintConfigOrigin) {
  auto cfg = resolve_args({"--python=/opt/py", "t.py"});
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->command.python_origin, "flag --python");
  auto from_env = resolve_args({"t.py"}, util::Env{{"PYTHON_EXEC", "/opt/py3"}});
  ASSERT_TRUE(from_env) << from_env.error().message;
  EXPECT_EQ(from_env->command.python, "/opt/py3");
  EXPECT_EQ(from_env->command.python_origin, "env PYTHON_EXEC");
}

TEST(Resolve, EnvDefaultsAreNamedInErrorsAndOrigins) {
  auto bad = resolve_args({"t.py"}, util::Env{{"PET_MAX_RESTARTS", "x"}});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("PET_MAX_RESTARTS 'x'"), std::string::npos);
  auto cfg = resolve_args({"t.py"}, util::Env{{"PET_NPROC_PER_NODE", "3"}});
  ASSERT_TRUE(cfg);
  EXPECT_EQ(cfg->group.nproc_per_node, 3);
  auto text = render_config(*cfg);
  EXPECT_NE(text.find("nproc_per_node"), std::string::npos);
  EXPECT_NE(text.find("(env PET_NPROC_PER_NODE)"), std::string::npos);
}

TEST(Resolve, WorkerOutputSettingsAreParsedAndPrintedAsGiven) {
  auto cfg = resolve_args({"-r", "3", "-t", "0:1,1:2", "--local_ranks_filter=0, 2", "t.py"});
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_FALSE(cfg->output.redirects.is_map);
  EXPECT_EQ(cfg->output.redirects.all_bits, 3);
  EXPECT_TRUE(cfg->output.tee.is_map);
  EXPECT_EQ(cfg->output.tee.per_rank, (std::map<int, int>{{0, 1}, {1, 2}}));
  EXPECT_EQ(cfg->output.local_ranks_filter, (std::set<int>{0, 2}));
  const auto text = render_config(*cfg);
  EXPECT_TRUE(has_config_line(text, "redirects", "3  (flag -r)")) << text;
  EXPECT_TRUE(has_config_line(text, "tee", "0:1,1:2  (flag -t)")) << text;
  EXPECT_TRUE(has_config_line(text, "local_ranks_filter", "0, 2  (flag --local_ranks_filter)"))
      << text;
  auto plain = resolve_args({"t.py"});
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->output.redirects.all_bits, 0);
  EXPECT_TRUE(plain->output.local_ranks_filter.empty());
}

TEST(Resolve, LogLevelIsAnyCaseAndPrintedAsGiven) {
  struct Row {
    std::string text;
    LogLevel level;
  } rows[] = {{"DEBUG", LogLevel::debug},     {"Info", LogLevel::info},
              {"WARNING", LogLevel::warning}, {"warn", LogLevel::warning},
              {"error", LogLevel::error},     {"CRITICAL", LogLevel::critical},
              {"off", LogLevel::off},         {"trace", LogLevel::trace}};
  for (const auto& r : rows) {
    auto cfg = resolve_args({"--log-level", r.text, "t.py"});
    ASSERT_TRUE(cfg) << cfg.error().message;
    EXPECT_EQ(cfg->log_level, r.level) << r.text;
    EXPECT_TRUE(has_config_line(render_config(*cfg), "log_level", util::to_lower(r.text) + "  "))
        << r.text;
  }
  EXPECT_EQ(resolve_args({"--log-level=", "t.py"})->log_level, LogLevel::info);
  auto bad = resolve_args({"t.py"}, util::Env{{"LOGLEVEL", "loud"}});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "LOGLEVEL 'loud': expected one of debug, info, warning, error, critical, off");
}

// The parser checks a flag's choices; resolve checks them again for the values that do not
// pass through it (an environment variable, or ParsedArgs built by other code), with the
// flag table's choices.
TEST(Resolve, ChoicesOutsideTheParserAreCheckedAgainstTheFlagTable) {
  auto cfg = resolve_args({"t.py"}, util::Env{{"PET_START_METHOD", "thread"}});
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->start_method, "spawn");
  ASSERT_EQ(cfg->warnings.size(), 1U);
  EXPECT_EQ(cfg->warnings[0],
            "PET_START_METHOD 'thread': ignored, expected spawn, fork or forkserver (spawn is "
            "used)");
  EXPECT_EQ(resolve_args({"--start-method=fork", "t.py"})->start_method, "fork");
  struct Row {
    cli::FlagKey dest;
    std::string message;
  } rows[] = {
      {cli::flag::k_numa_binding, "x 'bad': expected node, socket, exclusive or core-complex"},
      {cli::flag::k_agent_store, "x 'bad': expected auto, on or off"},
  };
  for (const auto& r : rows) {
    auto parsed = cli::parse_args({"t.py"}, {});
    ASSERT_TRUE(parsed);
    parsed->settings[r.dest] = cli::Setting{"bad", cli::Origin::env, "x"};
    auto bad = resolve(*parsed, {}, host_facts(8, 2, "id", "NVML"), sched::Detected{});
    ASSERT_FALSE(bad) << r.message;
    EXPECT_EQ(bad.error().message, r.message);
  }
}

TEST(Resolve, PythonInterpreterPrecedence) {
  EXPECT_EQ(resolve_args({"t.py"})->command.python, "python3");
  EXPECT_EQ(resolve_args({"t.py"}, util::Env{{"PYTHON_EXEC", "/opt/py"}})->command.python,
            "/opt/py");
  EXPECT_EQ(resolve_args({"--python", "/x/py", "t.py"}, util::Env{{"PYTHON_EXEC", "/opt/py"}})
                ->command.python,
            "/x/py");
}

namespace {

Result<LaunchConfig> resolve_with(const std::vector<std::string>& args, const HostFacts& host) {
  auto parsed = cli::parse_args(args, {});
  if (!parsed) {
    return parsed.error();
  }
  return resolve(*parsed, {}, host, sched::Detected{});
}

}  // namespace

TEST(Resolve, NprocWordsSayWhichSourceCounted) {
  const HostFacts nvml = host_facts(4, 2, "id", "NVML");
  EXPECT_EQ(resolve_with({"--nproc_per_node=gpu", "t.py"}, nvml)->group.nproc_source, "gpu: NVML");
  EXPECT_EQ(resolve_with({"--nproc_per_node=cpu", "t.py"}, nvml)->group.nproc_source,
            "cpu: affinity mask");
  EXPECT_EQ(resolve_with({"--nproc_per_node=3", "t.py"}, nvml)->group.nproc_source, "");
  const HostFacts none = host_facts(4, 0, "id", "no NVML");
  auto fallback = resolve_with({"--nproc_per_node=auto", "t.py"}, none);
  ASSERT_TRUE(fallback) << fallback.error().message;
  EXPECT_EQ(fallback->group.nproc_per_node, 4);
  EXPECT_EQ(fallback->group.nproc_source, "auto: no GPU (no NVML), cpu: affinity mask");
  auto gpu = resolve_with({"--nproc_per_node=gpu", "t.py"}, none);
  ASSERT_FALSE(gpu);
  EXPECT_NE(gpu.error().message.find("none is: no NVML"), std::string::npos) << gpu.error().message;
}

TEST(Resolve, OmpThreadsModes) {
  EXPECT_EQ(resolve_args({"t.py"})->resources.omp_mode, OmpMode::torchrun);
  EXPECT_EQ(resolve_args({"--omp-threads=cpus", "t.py"})->resources.omp_mode, OmpMode::cpus);
  auto fixed = resolve_args({"--omp_threads", "6", "t.py"});
  ASSERT_TRUE(fixed) << fixed.error().message;
  EXPECT_EQ(fixed->resources.omp_mode, OmpMode::fixed);
  EXPECT_EQ(fixed->resources.omp_threads, 6);
  for (const char* bad : {"0", "-2", "many"}) {
    auto r = resolve_args({std::string("--omp-threads=") + bad, "t.py"});
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("--omp-threads '" + std::string(bad) + "'"), std::string::npos)
        << r.error().message;
  }
}

TEST(Resolve, NumaBindingAndPinGpusAreAccepted) {
  auto cfg = resolve_args({"--numa-binding=exclusive", "--pin-gpus", "t.py"});
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->resources.numa_binding, NumaBinding::exclusive);
  EXPECT_TRUE(cfg->resources.pin_gpus);
  EXPECT_TRUE(cfg->host.placements.empty());  // filled by the app, not by resolve
  EXPECT_EQ(resolve_args({"t.py"})->resources.numa_binding, NumaBinding::none);
  EXPECT_FALSE(resolve_args({"t.py"})->resources.pin_gpus);
  for (auto b : {NumaBinding::node, NumaBinding::socket, NumaBinding::exclusive,
                 NumaBinding::core_complex}) {
    const auto text = "--numa-binding=" + std::string(to_string(b));
    EXPECT_EQ(resolve_args({text, "t.py"})->resources.numa_binding, b) << text;
  }
}

TEST(Resolve, WithHostPlanAddsTheLaunchsDecisionsAndKeepsTheRest) {
  auto cfg = resolve_args({"--nproc-per-node=2", "t.py"});
  ASSERT_TRUE(cfg) << cfg.error().message;
  HostPlan host;
  host.placements = {{{0, 1}, std::nullopt, std::nullopt}, {{2}, std::string("1"), 0}};
  host.torchrun.nccl_names = NcclNames::current;
  const auto plan = with_host_plan(std::move(*cfg), host);
  EXPECT_EQ(plan.host.placements.size(), 2U);
  EXPECT_EQ(plan.host.placements[1].cuda_visible_devices, "1");
  EXPECT_EQ(plan.host.torchrun.nccl_names, NcclNames::current);
  EXPECT_EQ(plan.group.nproc_per_node, 2);
  EXPECT_EQ(plan.command.training_script, "t.py");
  EXPECT_FALSE(plan.items.empty());
}

TEST(Resolve, VirtualLocalRankFromTheFlagOrItsPetVariable) {
  EXPECT_TRUE(resolve_args({"--virtual-local-rank", "t.py"})->resources.virtual_local_rank);
  EXPECT_TRUE(resolve_args({"t.py"}, util::Env{{"PET_VIRTUAL_LOCAL_RANK", "1"}})
                  ->resources.virtual_local_rank);
  EXPECT_FALSE(resolve_args({"t.py"})->resources.virtual_local_rank);
}

TEST(Resolve, DisabledStoreSharingTurnsTheAgentStoreOffForC10dOnly) {
  const util::Env opt_out{{"TORCH_DISABLE_SHARE_RDZV_TCP_STORE", "1"}};
  EXPECT_EQ(resolve_args({"--standalone", "t.py"}, opt_out)->rdzv.agent_store, AgentStore::off);
  EXPECT_EQ(resolve_args({"t.py"}, opt_out)->rdzv.agent_store, AgentStore::automatic);  // static
  EXPECT_EQ(resolve_args({"--standalone", "--agent-store=on", "t.py"}, opt_out)->rdzv.agent_store,
            AgentStore::on);
  EXPECT_EQ(resolve_args({"--standalone", "t.py"})->rdzv.agent_store, AgentStore::automatic);
}

TEST(Resolve, DuplicateFiltersAreAcceptedWithOneWarningEach) {
  auto cfg = resolve_args({"--duplicate-stdout-filters=NCCL,,WARN,error", "t.py"},
                          util::Env{{"PET_DUPLICATE_STDERR_FILTERS", "Traceback"}});
  ASSERT_TRUE(cfg) << cfg.error().message;
  ASSERT_EQ(cfg->warnings.size(), 2u);
  EXPECT_NE(cfg->warnings[0].find("--duplicate-stdout-filters 'NCCL,,WARN,error': ignored"),
            std::string::npos)
      << cfg->warnings[0];
  EXPECT_NE(cfg->warnings[1].find("PET_DUPLICATE_STDERR_FILTERS 'Traceback': ignored"),
            std::string::npos)
      << cfg->warnings[1];
  EXPECT_TRUE(resolve_args({"t.py"})->warnings.empty());
}

TEST(Resolve, RequeuedSlurmJobShowsItsRestartEpochInPrintConfig) {
  const util::Env env{{"SLURM_JOB_ID", "4242"},
                      {"SLURM_STEP_ID", "0"},
                      {"SLURM_STEP_NODELIST", "n[1-2]"},
                      {"SLURM_STEP_NUM_NODES", "2"},
                      {"SLURM_STEP_TASKS_PER_NODE", "1(x2)"},
                      {"SLURM_NODEID", "0"},
                      {"SLURM_RESTART_COUNT", "2"}};
  auto detected = sched::detect_slurm(env);
  ASSERT_TRUE(detected) << detected.error().message;
  auto parsed = cli::parse_args({"--nnodes=2", "t.py"}, env);
  ASSERT_TRUE(parsed);
  const HostFacts host =
      host_facts(8, 2, "11111111-2222-4333-8444-555555555555", "CUDA_VISIBLE_DEVICES");
  auto cfg = resolve(*parsed, env, host, *detected);
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->rdzv.rdzv_id, "4242.0.r2");
  const auto text = render_config(*cfg);
  const auto line_start = text.find("rdzv_id");
  ASSERT_NE(line_start, std::string::npos) << text;
  const auto line = text.substr(line_start, text.find('\n', line_start) - line_start);
  EXPECT_NE(line.find("4242.0.r2"), std::string::npos) << line;
  EXPECT_NE(line.find("slurm: SLURM_JOB_ID + SLURM_STEP_ID + SLURM_RESTART_COUNT"),
            std::string::npos)
      << line;
}

namespace {

/// The rendezvous hint of a launch with `args` (the store's host loopback or not).
std::string hint_for(const std::vector<std::string>& args, bool store_is_loopback) {
  auto cfg = resolve_args(args);
  EXPECT_TRUE(cfg) << cfg.error().message;
  return cfg ? render_rendezvous_hint(*cfg, store_endpoint(cfg->rdzv), store_is_loopback) : "";
}

void expect_parts(const std::string& hint, const std::vector<std::string>& present,
                  const std::vector<std::string>& absent = {}) {
  for (const auto& part : present) {
    EXPECT_NE(hint.find(part), std::string::npos) << part << " not in " << hint;
  }
  for (const auto& part : absent) {
    EXPECT_EQ(hint.find(part), std::string::npos) << part << " in " << hint;
  }
}

}  // namespace

TEST(RendezvousHint, DefaultsOnTwoMachinesNameWhatIsMissingAndTheFixingFlags) {
  expect_parts(hint_for({"--nnodes", "2", "--nproc_per_node", "4", "train.py"}, true),
               {"--node_rank 0 of 2 with its store at 127.0.0.1:29500",
                "--master_addr 127.0.0.1 (the default) is a loopback address",
                "--node_rank was not given, so every node defaults to 0",
                "--master_addr <node-rank-0 host> --node_rank K",
                "--rdzv_backend c10d --rdzv_endpoint <host>:<port>", "srun", "PBS"});
}

TEST(RendezvousHint, GivenAddressAndRankAreNotBlamed) {
  expect_parts(hint_for({"--nnodes", "2", "--node_rank", "1", "--master_addr", "node7",
                         "--master_port", "1234", "train.py"},
                        false),
               {"--node_rank 1 of 2 with its store at node7:1234"}, {"loopback", "was not given"});
}

TEST(RendezvousHint, C10dNamesTheEndpointAndId) {
  expect_parts(hint_for({"--nnodes", "2:4", "--rdzv_backend", "c10d", "--rdzv_endpoint",
                         "localhost:29400", "--rdzv_id", "j1", "train.py"},
                        true),
               {"--rdzv_endpoint localhost:29400 with --rdzv_id j1",
                "localhost is a loopback address", "srun"});
}

TEST(RendezvousHint, SchedulerPlacedStoreAsksAboutTheOtherAgents) {
  auto cfg = resolve_args({"--nnodes", "2", "train.py"});
  ASSERT_TRUE(cfg) << cfg.error().message;
  for (auto& item : cfg->items) {
    if (item.name == "master_addr") {
      item.origin = "slurm: SLURM_JOB_NODELIST";
    }
  }
  expect_parts(render_rendezvous_hint(*cfg, store_endpoint(cfg->rdzv), false),
               {"The scheduler placed the store at 127.0.0.1:29500"}, {"--node_rank K"});
}
