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

TEST_F(SlurmE2E, TakenDerivedPortFallsBackToTheNextCandidate) {
  // The batch script runs on node1, the step's head node, and occupies the first port derived
  // from its job id (docs/schedulers.md: 29400 + (job id + step id) mod 3000; the first srun
  // step of a batch job is step 0) before the job's one srun step starts. The test support
  // sets PET_MASTER_PORT for every child; unset, the port is the scheduler's again.
  auto script = dir_ + "/job.sh";
  std::ofstream(script) << R"(#!/bin/bash
unset PET_MASTER_PORT
port=$((29400 + SLURM_JOB_ID % 3000))
echo "first=$port"
/usr/bin/python3 -c 'import socket, sys, time
s = socket.socket()
s.bind(("", int(sys.argv[1])))
s.listen()
open(sys.argv[2], "w").close()
time.sleep(120)' $port $1/listening &
holder=$!
for i in $(seq 100); do [ -e $1/listening ] && break; sleep 0.1; done
srun --ntasks-per-node=1 $2 --log_level INFO --nproc_per_node 1 --no_python $3 $1
rc=$?
kill $holder
exit $rc
)";
  auto r = slurm("sbatch --wait -N2 -o " + dir_ + "/out.txt " + script + " " + dir_ + " " +
                 ddprun_bin() + " " + worker("envdump.sh"));
  auto out = read_file(dir_ + "/out.txt");
  ASSERT_EQ(r.status, 0) << r.err << out;
  const auto at = out.find("first=");
  ASSERT_NE(at, std::string::npos) << out;
  const int first = std::stoi(out.substr(at + 6));
  EXPECT_NE(out.find("derived rendezvous port " + std::to_string(first) + " is taken"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("held by pid"), std::string::npos) << out;
  for (int rank = 0; rank < 2; ++rank) {
    auto env = parse_env_file(dir_ + "/env_" + std::to_string(rank) + ".txt");
    EXPECT_EQ(env["WORLD_SIZE"], "2") << out;
    EXPECT_EQ(env["MASTER_PORT"], std::to_string(first + 1)) << out;
  }
}
