// ddprun under a real Slurm 22.05 cluster (../shared/slurm-sim: 2 nodes in network
// namespaces on this machine), with no flag but --nproc_per_node: srun, sbatch and scancel.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "e2e/slurm_cluster.hpp"
#include "support/subprocess.hpp"

using namespace ddprun::test;
using namespace ddprun::test::slurmsim;
namespace fs = std::filesystem;

TEST_F(SlurmE2E, SrunWithNoRendezvousFlagsGivesTorchrunRanks) {
  auto r = slurm("srun -N2 --ntasks-per-node=1 " + ddprun_bin() +
                 " --nproc_per_node 2 --no_python " + worker("envdump.sh") + " " + dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  for (int rank = 0; rank < 4; ++rank) {
    auto env = parse_env_file(dir_ + "/env_" + std::to_string(rank) + ".txt");
    EXPECT_EQ(env["RANK"], std::to_string(rank));
    EXPECT_EQ(env["WORLD_SIZE"], "4");
    EXPECT_EQ(env["GROUP_RANK"], std::to_string(rank / 2));
    EXPECT_EQ(env["GROUP_WORLD_SIZE"], "2");
    EXPECT_EQ(env["MASTER_ADDR"], "node1");  // the head of the step's node list
    EXPECT_EQ(env["TORCHELASTIC_USE_AGENT_STORE"], "True");
    EXPECT_EQ(env["SLURMD_NODENAME"], rank < 2 ? "node1" : "node2");
  }
}

TEST_F(SlurmE2E, SbatchScriptWithSrun) {
  auto script = dir_ + "/job.sh";
  std::ofstream(script) << "#!/bin/bash\nsrun --ntasks-per-node=1 " << ddprun_bin()
                        << " --nproc_per_node 1 --no_python " << worker("envdump.sh") << " " << dir_
                        << "\n";
  auto r = slurm("sbatch --wait -N2 -o " + dir_ + "/out.txt " + script);
  ASSERT_EQ(r.status, 0) << r.err << read_file(dir_ + "/out.txt");
  EXPECT_EQ(parse_env_file(dir_ + "/env_1.txt")["WORLD_SIZE"], "2");
  EXPECT_EQ(parse_env_file(dir_ + "/env_1.txt")["SLURMD_NODENAME"], "node2");
}

TEST_F(SlurmE2E, SbatchScriptWithoutSrunFansOutThroughSrun) {
  auto script = dir_ + "/job.sh";
  std::ofstream(script) << "#!/bin/bash\n"
                        << ddprun_bin() << " --nproc_per_node 2 --no_python "
                        << worker("envdump.sh") << " " << dir_ << "\n";
  auto r = slurm("sbatch --wait -N2 -o " + dir_ + "/out.txt " + script);
  auto out = read_file(dir_ + "/out.txt");
  ASSERT_EQ(r.status, 0) << r.err << out;
  for (int rank = 0; rank < 4; ++rank) {
    auto env = parse_env_file(dir_ + "/env_" + std::to_string(rank) + ".txt");
    EXPECT_EQ(env["WORLD_SIZE"], "4");
    EXPECT_EQ(env["GROUP_RANK"], std::to_string(rank / 2));
    EXPECT_EQ(env["MASTER_ADDR"], "node1");
    EXPECT_EQ(env["SLURMD_NODENAME"], rank < 2 ? "node1" : "node2");
  }
}

TEST_F(SlurmE2E, FanOutStopsTheOtherNodeWhenOneFails) {
  auto tag = unique_tag();
  auto script = dir_ + "/job.sh";
  std::ofstream(script) << "#!/bin/bash\nexport " << tag << "\n"
                        << ddprun_bin()
                        << " --nproc_per_node 1 --shutdown_timeout 5 --no_python /bin/sh -c "
                        << "'if [ $RANK = 1 ]; then exit 3; fi; exec sleep 300'\n";
  auto r = slurm("sbatch --wait -N2 -o " + dir_ + "/out.txt " + script);
  auto out = read_file(dir_ + "/out.txt");
  EXPECT_NE(r.status, 0) << out;
  EXPECT_NE(out.find("ddprun: node node2 (node_rank 1) failed with exit code 1"), std::string::npos)
      << out;
  EXPECT_TRUE(eventually([&] { return processes_with_env(tag).empty(); }, std::chrono::seconds(60)))
      << processes_with_env(tag).size() << " processes left";
}

TEST_F(SlurmE2E, DoubleLaunchIsRefusedWithAnExplanation) {
  auto r = slurm("srun -N1 --ntasks-per-node=2 " + ddprun_bin() +
                 " --nproc_per_node 2 --no_python /bin/true");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("double launch"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--ntasks-per-node=1"), std::string::npos) << r.err;
}

TEST_F(SlurmE2E, ScancelLeavesNoProcessBehind) {
  auto tag = unique_tag();
  auto script = dir_ + "/job.sh";
  std::ofstream(script) << "#!/bin/bash\nexport " << tag << "\nsrun --ntasks-per-node=1 "
                        << ddprun_bin() << " --nproc_per_node 2 --no_python "
                        << worker("sleeper.sh") << " " << dir_ << "\n";
  auto submit = slurm("sbatch --parsable -N2 -o " + dir_ + "/out.txt " + script);
  ASSERT_EQ(submit.status, 0) << submit.err;
  auto job = submit.out.substr(0, submit.out.find_first_of(";\n"));
  ASSERT_TRUE(
      eventually([&] { return fs::exists(dir_ + "/ready_0") && fs::exists(dir_ + "/ready_3"); },
                 std::chrono::seconds(60)))
      << read_file(dir_ + "/out.txt");
  EXPECT_GE(processes_with_env(tag).size(), 8u);  // 2 agents + 4 workers + 4 grandchildren
  ASSERT_EQ(slurm("scancel " + job).status, 0);
  EXPECT_TRUE(eventually([&] { return processes_with_env(tag).empty(); }, std::chrono::seconds(60)))
      << processes_with_env(tag).size() << " processes left";
}
