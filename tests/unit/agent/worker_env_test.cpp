#include "ddprun/agent/worker_env.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <vector>

using namespace ddprun;
using namespace ddprun::agent;

namespace {

using Want = std::optional<std::string>;  // nullopt: the variable is unset

/// One variable of one worker's environment. Each row's `want` differs from what breaking
/// its rule would give (the rule's variable left out, or the other side of the precedence).
struct EnvRow {
  const char* rule;
  const char* name;
  Want want;
  util::Env agent = {};
  WorkerEnvPlan plan = {};
  WorkerFiles files = {};
  int local_rank = 1;
};

WorkerEnvPlan nccl_only(config::NcclNames names) { return WorkerEnvPlan{.nccl = names}; }

/// Local rank 0 has no device of its own, local rank 1 has GPU-x and, virtual, LOCAL_RANK=0.
WorkerEnvPlan placed(bool virtual_local_rank) {
  std::optional<int> local = virtual_local_rank ? std::optional<int>(0) : std::nullopt;
  return WorkerEnvPlan{.placements = {{std::nullopt, std::nullopt}, {"GPU-x", local}}};
}

std::vector<EnvRow> env_rows() {
  using config::NcclNames;
  const char* omp = "OMP_NUM_THREADS";
  const char* fault = "PYTHONFAULTHANDLER";
  const char* unbuf = "PYTHONUNBUFFERED";
  const char* nccl = "TORCH_NCCL_ASYNC_ERROR_HANDLING";
  const char* legacy = "NCCL_ASYNC_ERROR_HANDLING";
  const char* error = "TORCHELASTIC_ERROR_FILE";
  const char* timer = "TORCHELASTIC_TIMER_FILE";
  const char* cuda = "CUDA_VISIBLE_DEVICES";
  const util::Env user_cuda{{cuda, "3,GPU-x"}};
  const auto current = nccl_only(NcclNames::current);
  const auto old = nccl_only(NcclNames::legacy);
  const auto both = nccl_only(NcclNames::both);
  std::vector<EnvRow> rows = {
      // 1. what the plan adds, only where the agent's environment lacks it
      {"the OMP decision reaches the workers", omp, "4", {}, {.omp_num_threads = "4"}},
      {"no OMP decision: unset", omp, std::nullopt},
      {"a user's OMP_NUM_THREADS is kept", omp, "8", {{omp, "8"}}, {.omp_num_threads = "4"}},
      {"faulthandler dumps: PYTHONFAULTHANDLER=1", fault, "1", {}, {.faulthandler = true}},
      {"no faulthandler dumps: unset", fault, std::nullopt},
      {"a user's PYTHONFAULTHANDLER is kept", fault, "0", {{fault, "0"}}, {.faulthandler = true}},
      {"--stall-timeout: PYTHONUNBUFFERED=1", unbuf, "1", {}, {.unbuffered = true}},
      {"no --stall-timeout: unset", unbuf, std::nullopt},
      {"a user's PYTHONUNBUFFERED is kept", unbuf, "", {{unbuf, ""}}, {.unbuffered = true}},
      {"torch unknown: the current NCCL name", nccl, "1", {}, both},
      {"torch unknown: the legacy NCCL name", legacy, "1", {}, both},
      {"torch >= 2.2: the current name", nccl, "1", {}, current},
      {"torch >= 2.2: not the legacy name", legacy, std::nullopt, {}, current},
      {"torch < 2.2: the legacy name", legacy, "1", {}, old},
      {"torch < 2.2: not the current name", nccl, std::nullopt, {}, old},
      {"a user's NCCL variable is kept", nccl, "0", {{nccl, "0"}}, current},
      {"a user's name torch does not read passes", legacy, "0", {{legacy, "0"}}, current},
      // 2. the agent's environment
      {"the agent's variables pass", "FOO", "bar", {{"FOO", "bar"}}},
      // 3. torchrun's per-worker variables and the round's timer file
      {"torchrun's RANK wins over the user's", "RANK", "11", {{"RANK", "7"}}},
      {"torchrun's LOCAL_RANK", "LOCAL_RANK", "1", {{"LOCAL_RANK", "7"}}},
      {"the worker's error file", error, "/e.json", {{error, "/u"}}, {}, {"/e.json", ""}},
      {"log files off: an empty error file, set", error, "", {{error, "/u"}}},
      {"the watchdog's FIFO wins over the user's", timer, "/w", {{timer, "/u"}}, {}, {"", "/w"}},
      {"no watchdog: the user's timer file passes", timer, "/u", {{timer, "/u"}}},
      {"no watchdog, no user's: unset", timer, std::nullopt},
      // 4. the worker's placement
      {"--pin-gpus: the worker's own device", cuda, "GPU-x", user_cuda, placed(false)},
      {"no device of its own: the agent's list", cuda, "3,GPU-x", user_cuda, placed(false), {}, 0},
      {"a rank past the placements: the agent's", cuda, "3,GPU-x", user_cuda, placed(false), {}, 2},
      {"--virtual-local-rank: LOCAL_RANK=0", "LOCAL_RANK", "0", {}, placed(true)},
      {"without it: the local rank", "LOCAL_RANK", "1", {}, placed(false)},
  };
  return rows;
}

TEST(WorkerEnv, EachVariableAndPrecedenceRule) {
  const RoundInfo round{"h", 29500, 0, 3, "id", false, "trainer"};
  for (const auto& row : env_rows()) {
    const WorkerRanks ranks{row.local_rank, 10 + row.local_rank, 0, 0, 3, 30, 10, 30};
    auto env = worker_env(row.agent, row.plan, round, ranks, row.files);
    EXPECT_EQ(env.get(row.name), row.want) << row.rule << ": " << row.name;
  }
}

TEST(WorkerEnv, MatchesTheCapturedTorchrunExample) {
  // Spec §2.2, worker 1 of `--standalone --nproc_per_node=2`.
  util::Env agent{{"FOO", "bar"}, {"PATH", "/usr/bin:/bin"}};
  WorkerEnvPlan plan{.omp_num_threads = "1", .nccl = config::NcclNames::legacy};  // torch 1.13
  RoundInfo round{"localhost", 37547, 0, 0, "fe52e109", false, "default"};
  WorkerRanks ranks{1, 1, 0, 1, 2, 2, 1, 2};
  auto env = worker_env(agent, plan, round, ranks, {"/tmp/x/attempt_0/1/error.json", ""});
  util::Env expected{{"FOO", "bar"},
                     {"PATH", "/usr/bin:/bin"},
                     {"OMP_NUM_THREADS", "1"},
                     {"GROUP_RANK", "0"},
                     {"GROUP_WORLD_SIZE", "1"},
                     {"LOCAL_RANK", "1"},
                     {"LOCAL_WORLD_SIZE", "2"},
                     {"MASTER_ADDR", "localhost"},
                     {"MASTER_PORT", "37547"},
                     {"NCCL_ASYNC_ERROR_HANDLING", "1"},
                     {"RANK", "1"},
                     {"ROLE_NAME", "default"},
                     {"ROLE_RANK", "1"},
                     {"ROLE_WORLD_SIZE", "2"},
                     {"TORCHELASTIC_ERROR_FILE", "/tmp/x/attempt_0/1/error.json"},
                     {"TORCHELASTIC_MAX_RESTARTS", "0"},
                     {"TORCHELASTIC_RESTART_COUNT", "0"},
                     {"TORCHELASTIC_RUN_ID", "fe52e109"},
                     {"TORCHELASTIC_USE_AGENT_STORE", "False"},
                     {"WORLD_SIZE", "2"}};
  EXPECT_EQ(env.vars(), expected.vars());
}

TEST(WorkerEnv, TheRoundsVariables) {
  const RoundInfo round{"h", 1, 2, 3, "id", true, "r"};
  auto env = worker_env({}, {}, round, WorkerRanks{}, {});
  EXPECT_EQ(env.get("TORCHELASTIC_USE_AGENT_STORE"), "True");
  EXPECT_EQ(env.get("TORCHELASTIC_RESTART_COUNT"), "2");
  EXPECT_EQ(env.get("TORCHELASTIC_MAX_RESTARTS"), "3");
  EXPECT_EQ(env.get("ROLE_NAME"), "r");
}

/// What make_worker_env_plan decides for one launch.
struct PlanRow {
  const char* rule;
  bool no_python = false;
  bool stacks_on_failure = false;
  std::chrono::milliseconds stall_timeout{0};
  util::Env env;
  bool faulthandler = false;
  bool unbuffered = false;
};

TEST(WorkerEnvPlan, HangDetectionVariables) {
  using std::chrono::seconds;
  const std::vector<PlanRow> rows = {
      {"nothing asks for stacks", false, false, seconds(0), {}, false, false},
      {"--stacks-on-failure", false, true, seconds(0), {}, true, false},
      {"--stall-timeout", false, false, seconds(30), {}, true, true},
      {"the file-timer watchdog",
       false,
       false,
       seconds(0),
       {{"TORCHELASTIC_ENABLE_FILE_TIMER", "1"}},
       true,
       false},
      {"a watchdog not enabled with 1",
       false,
       false,
       seconds(0),
       {{"TORCHELASTIC_ENABLE_FILE_TIMER", "true"}},
       false,
       false},
      {"--no-python workers get neither", true, true, seconds(30), {}, false, false},
  };
  for (const auto& row : rows) {
    config::LaunchConfig cfg;
    cfg.command.no_python = row.no_python;
    cfg.supervision.stacks_on_failure = row.stacks_on_failure;
    cfg.supervision.stall_timeout = row.stall_timeout;
    auto plan = make_worker_env_plan(cfg.command, cfg.supervision, cfg.host, row.env, std::nullopt);
    EXPECT_EQ(plan.faulthandler, row.faulthandler) << row.rule;
    EXPECT_EQ(plan.unbuffered, row.unbuffered) << row.rule;
  }
}

TEST(WorkerEnvPlan, CarriesTheOmpValueNcclNamesAndPlacements) {
  config::LaunchConfig cfg;
  cfg.host.torchrun.nccl_names = config::NcclNames::legacy;
  cfg.host.placements = {{{0, 1}, std::nullopt, std::nullopt}, {{2}, std::string("MIG-1"), 0}};
  auto plan = make_worker_env_plan(cfg.command, cfg.supervision, cfg.host, {}, "6");
  EXPECT_EQ(plan.omp_num_threads, "6");
  EXPECT_EQ(plan.nccl, config::NcclNames::legacy);
  ASSERT_EQ(plan.placements.size(), 2U);
  EXPECT_EQ(plan.placements[0].cuda_visible_devices, std::nullopt);
  EXPECT_EQ(plan.placements[0].local_rank, std::nullopt);
  EXPECT_EQ(plan.placements[1].cuda_visible_devices, "MIG-1");
  EXPECT_EQ(plan.placements[1].local_rank, 0);
  EXPECT_EQ(make_worker_env_plan(cfg.command, cfg.supervision, cfg.host, {}, std::nullopt)
                .omp_num_threads,
            std::nullopt);
}

// torchrun >= 2.9 writes --signals-to-handle into its own environment, as given, over a value
// the launcher inherited; older torchrun sets nothing.
TEST(WorkerEnvPlan, SignalsToHandleAsTheWorkersTorchrunGivesThem) {
  config::LaunchConfig cfg;
  cfg.supervision.signals_to_handle_text = "SIGTERM,SIGUSR1";
  EXPECT_EQ(make_worker_env_plan(cfg.command, cfg.supervision, cfg.host, {}, std::nullopt)
                .signals_to_handle,
            "SIGTERM,SIGUSR1");
  cfg.host.torchrun.signals_env = false;
  EXPECT_EQ(make_worker_env_plan(cfg.command, cfg.supervision, cfg.host, {}, std::nullopt)
                .signals_to_handle,
            std::nullopt);

  const util::Env agent{{"TORCHELASTIC_SIGNALS_TO_HANDLE", "SIGINT"}};
  WorkerEnvPlan plan;
  RoundInfo round{"localhost", 29500, 0, 0, "job", true, "default"};
  const WorkerRanks ranks = worker_ranks(NodePlace{0, 1, 1, 0, 1, 0, 1}).front();
  EXPECT_EQ(worker_env(agent, plan, round, ranks, {}).get("TORCHELASTIC_SIGNALS_TO_HANDLE"),
            "SIGINT")
      << "not set by the agent: the launcher's own passes";
  plan.signals_to_handle = "SIGTERM,SIGINT,SIGHUP,SIGQUIT";
  EXPECT_EQ(worker_env(agent, plan, round, ranks, {}).get("TORCHELASTIC_SIGNALS_TO_HANDLE"),
            "SIGTERM,SIGINT,SIGHUP,SIGQUIT");
}

// The list the man page prints is what worker_env() sets: with every option that adds a
// variable on and an empty agent environment, the names set equal the list's.
TEST(WorkerEnv, SetsExactlyTheVariablesWorkerVariablesLists) {
  WorkerEnvPlan plan{.omp_num_threads = "1",
                     .faulthandler = true,
                     .unbuffered = true,
                     .nccl = config::NcclNames::both,
                     .signals_to_handle = "SIGTERM",
                     .placements = {{"GPU-x", std::nullopt}}};
  RoundInfo round{"localhost", 29500, 0, 0, "job", true, "default"};
  const WorkerRanks ranks = worker_ranks(NodePlace{0, 1, 1, 0, 1, 0, 1}).front();
  const auto env = worker_env({}, plan, round, ranks, WorkerFiles{"/e.json", "/timer"});
  std::set<std::string> set;
  for (const auto& entry : env.to_strings()) {
    set.insert(entry.substr(0, entry.find('=')));
  }
  std::set<std::string> listed;
  for (const auto& v : worker_variables()) {
    EXPECT_FALSE(v.text.empty()) << v.name;
    EXPECT_TRUE(listed.insert(std::string(v.name)).second) << v.name << " listed twice";
  }
  EXPECT_EQ(set, listed);
}

TEST(OmpThreads, TorchrunModeSetsOneWithTheBannerOnlyForSeveralWorkers) {
  auto d = decide_omp_threads({}, config::OmpMode::torchrun, 0, 4, 16);
  EXPECT_EQ(d.value, "1");
  EXPECT_EQ(d.log, OmpDecision::Log::banner);
  EXPECT_EQ(d.message, omp_banner());
  auto one = decide_omp_threads({}, config::OmpMode::torchrun, 0, 1, 16);
  EXPECT_EQ(one.value, std::nullopt);
  EXPECT_EQ(one.log, OmpDecision::Log::info);
  EXPECT_EQ(omp_banner().substr(0, 42), std::string(41, '*') + "\n");
  EXPECT_NE(omp_banner().find("as needed. \n"), std::string::npos);
}

TEST(OmpThreads, CpusModeDividesTheMaskAndNeverGoesBelowOne) {
  auto d = decide_omp_threads({}, config::OmpMode::cpus, 0, 4, 18);
  EXPECT_EQ(d.value, "4");
  EXPECT_EQ(d.log, OmpDecision::Log::warning);
  EXPECT_NE(d.message.find("18 CPU(s) in the affinity mask / 4 worker(s)"), std::string::npos)
      << d.message;
  EXPECT_EQ(decide_omp_threads({}, config::OmpMode::cpus, 0, 8, 2).value, "1");
}

TEST(OmpThreads, FixedModeSetsTheNumber) {
  auto d = decide_omp_threads({}, config::OmpMode::fixed, 6, 2, 2);
  EXPECT_EQ(d.value, "6");
  EXPECT_EQ(d.message, "Setting OMP_NUM_THREADS=6 for each worker (--omp-threads 6)");
}

TEST(OmpThreads, UserValueIsNeverOverridden) {
  util::Env user{{"OMP_NUM_THREADS", "3"}};
  for (auto mode : {config::OmpMode::torchrun, config::OmpMode::cpus, config::OmpMode::fixed}) {
    auto d = decide_omp_threads(user, mode, 6, 4, 16);
    EXPECT_EQ(d.value, std::nullopt);
    EXPECT_NE(d.message.find("OMP_NUM_THREADS=3 from the environment"), std::string::npos);
    EXPECT_EQ(d.log, mode == config::OmpMode::torchrun ? OmpDecision::Log::info
                                                       : OmpDecision::Log::warning);
  }
}

}  // namespace
