// Where a node's domain comes from (#42), through the ddprun binary and --print-config: the GPUs'
// NVLink fabric from a scripted NVML (the versioned call and the older one), NVIDIA's rule for a
// node alone, DDPRUN_NODE_DOMAIN and --rdzv-conf node_domain over the fabric, Slurm's block.

#include <gtest/gtest.h>

#include "support/subprocess.hpp"

using namespace ddprun::test;

namespace {

constexpr const char* k_uuid_hex = "0123456789abcdef0123456789abcdef";
constexpr const char* k_domain = "01234567-89ab-cdef-0123-456789abcdef.5";

/// `ddprun --print-config` of a two-node c10d job (`flags` may replace the node count and
/// the endpoint) under `env -i` with `extra` variables and the fake NVML on the library path.
RunResult print_config(const std::vector<std::string>& extra,
                       const std::vector<std::string>& flags = {"--nnodes", "2", "--rdzv-endpoint",
                                                                "127.0.0.1:29400"}) {
  std::vector<std::string> argv{"/usr/bin/env", "-i", "PATH=/usr/bin:/bin",
                                std::string("LD_LIBRARY_PATH=") + DDPRUN_FAKE_NVML_DIR};
  argv.insert(argv.end(), extra.begin(), extra.end());
  for (const auto& a : {ddprun_bin(), std::string("--print-config"), std::string("--rdzv-backend"),
                        std::string("c10d")}) {
    argv.push_back(a);
  }
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("--no-python");
  argv.push_back("/bin/true");
  return run(argv);
}

/// The --print-config line of `name`.
std::string line_of(const std::string& out, const std::string& name) {
  auto at = out.find(name);
  return at == std::string::npos ? "" : out.substr(at, out.find('\n', at) - at);
}

TEST(DomainE2E, TheGpusFabricGivesClusterUuidDotCliqueId) {
  auto r = print_config({std::string("FAKE_NVML_FABRIC=") + k_uuid_hex + ":5"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto line = line_of(r.out, "node_domain");
  EXPECT_NE(line.find(k_domain), std::string::npos) << r.out;
  EXPECT_NE(line.find("NVML fabric of GPU 0"), std::string::npos) << line;
}

TEST(DomainE2E, ADriverWithOnlyTheOlderCallGivesTheSameDomain) {
  auto r = print_config(
      {std::string("FAKE_NVML_FABRIC=") + k_uuid_hex + ":5", "FAKE_NVML_FABRIC_API=legacy"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(line_of(r.out, "node_domain").find(k_domain), std::string::npos) << r.out;
}

TEST(DomainE2E, AnHgxNodeWithAnAllZeroUuidIsANodeAlone) {
  auto r = print_config({"FAKE_NVML_FABRIC=00000000000000000000000000000000:0"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto line = line_of(r.out, "node_domain");
  EXPECT_NE(line.find("none: the node alone (GPU 0: all-zero ClusterUUID (a node alone))"),
            std::string::npos)
      << line;
}

TEST(DomainE2E, AFabricStillFormingIsNoDomain) {
  auto r = print_config({std::string("FAKE_NVML_FABRIC=") + k_uuid_hex + ":5:2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(line_of(r.out, "node_domain").find("fabric state IN_PROGRESS"), std::string::npos)
      << r.out;
}

TEST(DomainE2E, TheVariableAndTheRdzvConfKeyWinOverTheFabric) {
  const std::string fabric = std::string("FAKE_NVML_FABRIC=") + k_uuid_hex + ":5";
  auto by_env = print_config({fabric, "DDPRUN_NODE_DOMAIN=rack7"});
  ASSERT_EQ(by_env.status, 0) << by_env.err;
  const auto env_line = line_of(by_env.out, "node_domain");
  EXPECT_NE(env_line.find("rack7"), std::string::npos) << env_line;
  EXPECT_NE(env_line.find("DDPRUN_NODE_DOMAIN"), std::string::npos) << env_line;
  auto by_conf = print_config(
      {fabric, "DDPRUN_NODE_DOMAIN=rack7"},
      {"--nnodes", "2", "--rdzv-endpoint", "127.0.0.1:29400", "--rdzv-conf", "node_domain=rack9"});
  ASSERT_EQ(by_conf.status, 0) << by_conf.err;
  EXPECT_NE(line_of(by_conf.out, "node_domain").find("rack9"), std::string::npos) << by_conf.out;
}

TEST(DomainE2E, SlurmsBlockIsTheDomainAndItsPathTheTopology) {
  auto r =
      print_config({"SLURM_JOB_ID=77", "SLURM_STEP_ID=0", "SLURM_STEP_NODELIST=localhost",
                    "SLURM_STEP_NUM_NODES=1", "SLURM_NODEID=0", "SLURMD_NODENAME=localhost",
                    "SLURM_TOPOLOGY_ADDR=b3.localhost", "SLURM_TOPOLOGY_ADDR_PATTERN=block.node"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto line = line_of(r.out, "node_domain");
  EXPECT_NE(line.find("b3"), std::string::npos) << r.out;
  EXPECT_NE(line.find("SLURM_TOPOLOGY_ADDR (block)"), std::string::npos) << line;
  EXPECT_NE(line_of(r.out, "topology").find("b3"), std::string::npos) << r.out;
}

// Inside a two-node srun step the node count is Slurm's, not a flag: the fabric is read too.
TEST(DomainE2E, ASlurmStepWithoutNnodesReadsTheFabric) {
  auto r = print_config({std::string("FAKE_NVML_FABRIC=") + k_uuid_hex + ":5", "SLURM_JOB_ID=77",
                         "SLURM_STEP_ID=0", "SLURM_STEP_NODELIST=localhost,127.0.0.2",
                         "SLURM_STEP_NUM_NODES=2", "SLURM_NODEID=0", "SLURMD_NODENAME=localhost"},
                        {});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(line_of(r.out, "nnodes").find("2:2"), std::string::npos) << r.out;
  EXPECT_NE(line_of(r.out, "node_domain").find(k_domain), std::string::npos) << r.out;
}

}  // namespace
