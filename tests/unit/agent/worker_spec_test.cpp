#include "ddprun/agent/worker_spec.hpp"

#include "ddprun/agent/policy.hpp"

#include <gtest/gtest.h>

using namespace ddprun;
using namespace ddprun::agent;

namespace {

config::LaunchConfig python_config() {
  config::LaunchConfig cfg;
  cfg.python = "/usr/bin/python3";
  cfg.training_script = "train.py";
  cfg.training_script_args = {"--lr=${local_rank}", "$local_rank", "${rank}", "a$$b"};
  return cfg;
}

}  // namespace

TEST(WorkerRanks, ConsecutiveRanksFromTheNodesPlace) {
  // Spec §2.2: agents with nproc 1 and 3 give ranks 0 and 1..3, world 4. The second one, in a
  // role of its own that starts at 0 and holds its 3 workers:
  auto second = worker_ranks(NodePlace{1, 2, 3, 1, 4, 0, 3});
  ASSERT_EQ(second.size(), 3U);
  EXPECT_EQ(second[0].rank, 1);
  EXPECT_EQ(second[2].rank, 3);
  EXPECT_EQ(second[2].local_rank, 2);
  EXPECT_EQ(second[2].group_rank, 1);
  EXPECT_EQ(second[2].role_rank, 2);
  EXPECT_EQ(second[0].world_size, 4);
  EXPECT_EQ(second[0].group_world_size, 2);
  EXPECT_EQ(second[0].local_world_size, 3);
  EXPECT_EQ(second[0].role_world_size, 3);
  EXPECT_TRUE(worker_ranks(NodePlace{0, 1, 0, 0, 0, 0, 0}).empty());
}

TEST(WorkerArgv, PythonScriptWithMacroSubstitution) {
  auto argv = worker_argv(python_config(), 1);
  EXPECT_EQ(argv, (std::vector<std::string>{"/usr/bin/python3", "-u", "train.py", "--lr=1", "1",
                                            "${rank}", "a$b"}));
}

TEST(WorkerArgv, ModuleAndLegacyLocalRank) {
  auto cfg = python_config();
  cfg.module = true;
  cfg.append_local_rank = true;
  cfg.training_script_args = {"x"};
  EXPECT_EQ(worker_argv(cfg, 0), (std::vector<std::string>{"/usr/bin/python3", "-u", "-m",
                                                           "train.py", "--local_rank=0", "x"}));
  cfg.local_rank_flag = "--local-rank";
  EXPECT_EQ(worker_argv(cfg, 3)[4], "--local-rank=3");
}

TEST(WorkerArgv, NoPythonRunsTheScriptItself) {
  auto cfg = python_config();
  cfg.no_python = true;
  cfg.training_script = "./run.sh";
  cfg.training_script_args = {"a", "b"};
  EXPECT_EQ(worker_argv(cfg, 0), (std::vector<std::string>{"./run.sh", "a", "b"}));
  cfg.run_path = true;  // --run-path wins over --no-python (emulated with python -u)
  EXPECT_EQ(worker_argv(cfg, 0)[0], "/usr/bin/python3");
}

TEST(WorkerEnv, MatchesTheCapturedTorchrunExample) {
  // Spec §2.2, worker 1 of `--standalone --nproc_per_node=2`.
  util::Env agent{{"FOO", "bar"}, {"PATH", "/usr/bin:/bin"}, {"OMP_NUM_THREADS", "1"}};
  RoundInfo round{"localhost", 37547, 0, 0, "fe52e109", false, "default"};
  WorkerRanks ranks{1, 1, 0, 1, 2, 2, 1, 2};
  auto env = worker_env(agent, round, ranks, "/tmp/x/attempt_0/1/error.json",
                        config::NcclNames::legacy);  // torch 1.13's name only
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

// torch >= 2.2 warns about the old name from every rank that makes an NCCL group; torch 1.13
// reads only the old one (async error handling stays on for it).
TEST(WorkerEnv, EachTorchGetsTheNcclNameItReads) {
  const RoundInfo round{"h", 1, 0, 0, "id", true, "r"};
  auto current = worker_env({}, round, WorkerRanks{}, "", config::NcclNames::current);
  EXPECT_EQ(current.get("TORCH_NCCL_ASYNC_ERROR_HANDLING"), "1");
  EXPECT_FALSE(current.has("NCCL_ASYNC_ERROR_HANDLING"));
  auto legacy = worker_env({}, round, WorkerRanks{}, "", config::NcclNames::legacy);
  EXPECT_EQ(legacy.get("NCCL_ASYNC_ERROR_HANDLING"), "1");
  EXPECT_FALSE(legacy.has("TORCH_NCCL_ASYNC_ERROR_HANDLING"));
  auto kept = worker_env({{"NCCL_ASYNC_ERROR_HANDLING", "0"}}, round, WorkerRanks{}, "",
                         config::NcclNames::current);
  EXPECT_EQ(kept.get("NCCL_ASYNC_ERROR_HANDLING"), "0") << "the user's own variable passes";
}

TEST(WorkerEnv, KeepsTheUsersNcclSetting) {
  util::Env agent{{"NCCL_ASYNC_ERROR_HANDLING", "0"}};
  auto env = worker_env(agent, RoundInfo{"h", 1, 2, 3, "id", true, "r"}, WorkerRanks{}, "");
  EXPECT_EQ(env.get("NCCL_ASYNC_ERROR_HANDLING"), "0");
  EXPECT_EQ(env.get("TORCH_NCCL_ASYNC_ERROR_HANDLING"), "1");
  EXPECT_EQ(env.get("TORCHELASTIC_USE_AGENT_STORE"), "True");
  EXPECT_EQ(env.get("TORCHELASTIC_RESTART_COUNT"), "2");
  EXPECT_EQ(env.get("TORCHELASTIC_ERROR_FILE"), "");
}

TEST(OmpDefault, OnlyWhenUnsetAndSeveralWorkers) {
  util::Env env;
  EXPECT_FALSE(apply_omp_default(env, 1));
  EXPECT_TRUE(apply_omp_default(env, 2));
  EXPECT_EQ(env.get("OMP_NUM_THREADS"), "1");
  util::Env user{{"OMP_NUM_THREADS", "8"}};
  EXPECT_FALSE(apply_omp_default(user, 4));
  EXPECT_EQ(user.get("OMP_NUM_THREADS"), "8");
  EXPECT_EQ(omp_banner().substr(0, 42), std::string(41, '*') + "\n");
  EXPECT_NE(omp_banner().find("as needed. \n"), std::string::npos);
}

TEST(NextStep, PolicyTable) {
  EXPECT_EQ(next_step(Outcome::succeeded, 0), Step::finish_success);
  EXPECT_EQ(next_step(Outcome::failed, 1), Step::restart);
  EXPECT_EQ(next_step(Outcome::failed, 0), Step::fail);
  EXPECT_EQ(next_step(Outcome::stalled, 1), Step::restart);
  EXPECT_EQ(next_step(Outcome::stalled, 0), Step::fail);
  EXPECT_EQ(to_string(Outcome::stalled), "STALLED");
  EXPECT_EQ(next_step(Outcome::peer_failed, 2), Step::restart);
  EXPECT_EQ(next_step(Outcome::peer_failed, 0), Step::fail);
  EXPECT_EQ(next_step(Outcome::membership_changed, 0), Step::restart_free);
  EXPECT_EQ(next_step(Outcome::signaled, 5), Step::exit_signaled);
  EXPECT_EQ(next_step(Outcome::store_lost, 5), Step::exit_store_lost);
}

TEST(OmpThreads, TorchrunModeSetsOneWithTheBannerOnlyForSeveralWorkers) {
  auto d = decide_omp_threads({}, config::OmpMode::torchrun, 0, 4, 16);
  EXPECT_EQ(d.value, "1");
  EXPECT_EQ(d.log, OmpDecision::Log::banner);
  EXPECT_EQ(d.message, omp_banner());
  auto one = decide_omp_threads({}, config::OmpMode::torchrun, 0, 1, 16);
  EXPECT_EQ(one.value, std::nullopt);
  EXPECT_EQ(one.log, OmpDecision::Log::info);
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

TEST(Placement, SetsPinnedDeviceAndReturnsCpus) {
  auto cfg = python_config();
  cfg.placements = {{{0, 1}, std::nullopt, std::nullopt},
                    {{2}, std::string("GPU-x"), std::nullopt}};
  util::Env env{{"CUDA_VISIBLE_DEVICES", "3,GPU-x"}};
  EXPECT_EQ(apply_placement(cfg, 0, env), (std::vector<int>{0, 1}));
  EXPECT_EQ(env.get("CUDA_VISIBLE_DEVICES"), "3,GPU-x");
  EXPECT_EQ(apply_placement(cfg, 1, env), (std::vector<int>{2}));
  EXPECT_EQ(env.get("CUDA_VISIBLE_DEVICES"), "GPU-x");
  EXPECT_TRUE(apply_placement(cfg, 2, env).empty());
  cfg.placements.clear();
  EXPECT_TRUE(apply_placement(cfg, 0, env).empty());
}

TEST(ApplyPlacement, VirtualLocalRankSetsLocalRankZero) {
  auto cfg = python_config();
  cfg.placements = {{{}, std::string("0"), std::nullopt}, {{}, std::string("MIG-1"), 0}};
  util::Env env{{"CUDA_VISIBLE_DEVICES", "0,MIG-1"}, {"LOCAL_RANK", "1"}};
  EXPECT_TRUE(apply_placement(cfg, 1, env).empty());
  EXPECT_EQ(env.get("CUDA_VISIBLE_DEVICES"), "MIG-1");
  EXPECT_EQ(env.get("LOCAL_RANK"), "0");
  util::Env plain{{"LOCAL_RANK", "0"}};
  apply_placement(cfg, 0, plain);
  EXPECT_EQ(plain.get("LOCAL_RANK"), "0");
  EXPECT_EQ(plain.get("CUDA_VISIBLE_DEVICES"), "0");
}
