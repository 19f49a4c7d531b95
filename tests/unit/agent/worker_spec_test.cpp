#include "ddprun/agent/worker_spec.hpp"

#include "ddprun/agent/policy.hpp"

#include <gtest/gtest.h>

using namespace ddprun;
using namespace ddprun::agent;

namespace {

config::LaunchConfig python_config() {
  config::LaunchConfig cfg;
  cfg.command.python = "/usr/bin/python3";
  cfg.command.training_script = "train.py";
  cfg.command.training_script_args = {"--lr=${local_rank}", "$local_rank", "${rank}", "a$$b"};
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
  auto argv = worker_argv(python_config().command, 1);
  EXPECT_EQ(argv, (std::vector<std::string>{"/usr/bin/python3", "-u", "train.py", "--lr=1", "1",
                                            "${rank}", "a$b"}));
}

TEST(WorkerArgv, ModuleAndLegacyLocalRank) {
  auto cfg = python_config();
  cfg.command.module = true;
  cfg.command.append_local_rank = true;
  cfg.command.training_script_args = {"x"};
  EXPECT_EQ(worker_argv(cfg.command, 0),
            (std::vector<std::string>{"/usr/bin/python3", "-u", "-m", "train.py", "--local_rank=0",
                                      "x"}));
  cfg.command.local_rank_flag = "--local-rank";
  EXPECT_EQ(worker_argv(cfg.command, 3)[4], "--local-rank=3");
}

TEST(WorkerArgv, NoPythonRunsTheScriptItself) {
  auto cfg = python_config();
  cfg.command.no_python = true;
  cfg.command.training_script = "./run.sh";
  cfg.command.training_script_args = {"a", "b"};
  EXPECT_EQ(worker_argv(cfg.command, 0), (std::vector<std::string>{"./run.sh", "a", "b"}));
  cfg.command.run_path = true;  // --run-path wins over --no-python (emulated with python -u)
  EXPECT_EQ(worker_argv(cfg.command, 0)[0], "/usr/bin/python3");
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

TEST(PlacementCpus, TheLocalRanksCpusElseNone) {
  auto cfg = python_config();
  cfg.host.placements = {{{0, 1}, std::nullopt, std::nullopt}, {{2}, std::string("GPU-x"), 0}};
  EXPECT_EQ(placement_cpus(cfg.host, 0), (std::vector<int>{0, 1}));
  EXPECT_EQ(placement_cpus(cfg.host, 1), (std::vector<int>{2}));
  EXPECT_TRUE(placement_cpus(cfg.host, 2).empty());
  EXPECT_TRUE(placement_cpus(cfg.host, -1).empty());
  cfg.host.placements.clear();
  EXPECT_TRUE(placement_cpus(cfg.host, 0).empty());
}
