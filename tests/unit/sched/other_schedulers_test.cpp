// PBS, LSF, Flux, Open MPI and MPICH env fixtures.

#include "ddprun/sched/detect.hpp"
#include "ddprun/sched/ports.hpp"

#include <gtest/gtest.h>

namespace ddprun::sched {
namespace {

using Hosts = std::vector<std::string>;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

template <typename R>
Detected ok(R r) {
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? *r : Detected{};
}

template <typename R>
std::string err(R r) {
  EXPECT_FALSE(r.has_value());
  return r ? "" : r.error().message;
}

// --- PBS ---

util::Env gadi_env() {
  return {{"PBS_JOBID", "1234.gadi-pbs"},
          {"PBS_NODEFILE", "/var/spool/pbs/aux/1234.gadi-pbs"},
          {"PBS_JOBNAME", "train"},
          {"CUDA_VISIBLE_DEVICES", "GPU-aaaa-1111,GPU-bbbb-2222,GPU-cccc-3333,GPU-dddd-4444"}};
}

/// Gadi style: one line per CPU, hosts repeated and adjacent, short names.
const std::string k_gadi_nodefile =
    "gadi-gpu-v100-0001\ngadi-gpu-v100-0001\ngadi-gpu-v100-0001\n"
    "gadi-gpu-v100-0002\ngadi-gpu-v100-0002\ngadi-gpu-v100-0002\n";

TEST(PbsDetect, NodefileIsDedupedInOrderAndFqdnMatchesShortName) {
  auto d = ok(detect_pbs(gadi_env(), k_gadi_nodefile, "gadi-gpu-v100-0002.gadi.nci.org.au"));
  EXPECT_EQ(d.scheduler, "pbs");
  EXPECT_EQ(d.hosts, (Hosts{"gadi-gpu-v100-0001", "gadi-gpu-v100-0002"}));
  EXPECT_EQ(d.nnodes, (Value{"2", "pbs: PBS_NODEFILE"}));
  EXPECT_EQ(d.node_rank, (Value{"1", "pbs: PBS_NODEFILE (this host's position)"}));
  EXPECT_EQ(d.rdzv_endpoint_host, (Value{"gadi-gpu-v100-0001", "pbs: PBS_NODEFILE (first host)"}));
  EXPECT_EQ(d.rdzv_id, (Value{"1234", "pbs: PBS_JOBID"}));
  EXPECT_EQ(d.port_candidates, candidate_ports(1234));
  EXPECT_EQ(d.nproc_hint, (Value{"4", "env: CUDA_VISIBLE_DEVICES"}));
  EXPECT_TRUE(d.warnings.empty());
}

TEST(PbsDetect, FirstSeenOrderIsKeptNotSorted) {
  auto d = ok(detect_pbs(gadi_env(), "nb\nna\n\nnb\n  na  \n", "na"));
  EXPECT_EQ(d.hosts, (Hosts{"nb", "na"}));
  EXPECT_EQ(d.node_rank->text, "1");
}

TEST(PbsDetect, NodenumWinsAndAMismatchWarns) {
  auto env = gadi_env();
  env.set("PBS_NODENUM", "0");
  auto d = ok(detect_pbs(env, k_gadi_nodefile, "gadi-gpu-v100-0002"));
  EXPECT_EQ(d.node_rank, (Value{"0", "pbs: PBS_NODENUM"}));
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_TRUE(contains(d.warnings[0], "PBS_NODENUM=0")) << d.warnings[0];
  env.set("PBS_NODENUM", "2");
  EXPECT_TRUE(contains(err(detect_pbs(env, k_gadi_nodefile, "x")), "PBS_NODENUM='2'"));
}

TEST(PbsDetect, UnknownHostIsAnErrorInAMultiNodeJob) {
  auto msg = err(detect_pbs(gadi_env(), k_gadi_nodefile, "login1"));
  EXPECT_TRUE(contains(msg, "pbs: this host 'login1' is not in PBS_NODEFILE")) << msg;
  EXPECT_TRUE(contains(msg, "gadi-gpu-v100-0001, gadi-gpu-v100-0002")) << msg;
}

TEST(PbsDetect, UnknownHostInAOneNodeJobIsNodeZero) {
  auto d = ok(detect_pbs(gadi_env(), "cn1\ncn1\n", "container-7f3a"));
  EXPECT_EQ(d.node_rank, (Value{"0", "pbs: PBS_NODEFILE (one-node job)"}));
  EXPECT_EQ(d.warnings.size(), 1u);
}

TEST(PbsDetect, EmptyNodefileIsAnError) {
  EXPECT_TRUE(contains(err(detect_pbs(gadi_env(), "\n\n", "x")), "lists no hosts"));
}

TEST(PbsDetect, SiteGpuCountGivesTheHintWithoutVisibleDevices) {
  auto env = gadi_env();
  env.unset("CUDA_VISIBLE_DEVICES");
  env.set("PBS_NGPUS", "8");
  EXPECT_EQ(ok(detect_pbs(env, k_gadi_nodefile, "gadi-gpu-v100-0001")).nproc_hint,
            (Value{"4", "pbs: PBS_NGPUS / nodes"}));
}

TEST(PbsDetect, EmptyVisibleDevicesMeansNoGpuAndWarns) {
  auto env = gadi_env();
  env.set("CUDA_VISIBLE_DEVICES", "");  // cgroups hook: devices on, no GPU assigned
  auto d = ok(detect_pbs(env, k_gadi_nodefile, "gadi-gpu-v100-0001"));
  EXPECT_FALSE(d.nproc_hint.has_value());
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_TRUE(contains(d.warnings[0], "no GPU")) << d.warnings[0];
}

TEST(PbsDetect, ArrayJobIdKeepsItsIndex) {
  auto env = gadi_env();
  env.set("PBS_JOBID", "1234[5].pbs01");
  auto d = ok(detect_pbs(env, k_gadi_nodefile, "gadi-gpu-v100-0001"));
  EXPECT_EQ(d.rdzv_id->text, "1234[5]");
  EXPECT_EQ(d.port_candidates, candidate_ports(port_key_of("1234[5]")));
}

// --- LSF ---

TEST(LsfDetect, McpuHostsGiveNodesAndThisHostsIndex) {
  util::Env env{{"LSB_JOBID", "5150"}, {"LSB_MCPU_HOSTS", "hA 4 hB 4"}};
  auto d = ok(detect_lsf(env, "hB"));
  EXPECT_EQ(d.scheduler, "lsf");
  EXPECT_EQ(d.hosts, (Hosts{"hA", "hB"}));
  EXPECT_EQ(d.nnodes, (Value{"2", "lsf: LSB_MCPU_HOSTS"}));
  EXPECT_EQ(d.node_rank->text, "1");
  EXPECT_EQ(d.rdzv_endpoint_host->text, "hA");
  EXPECT_EQ(d.rdzv_id, (Value{"5150", "lsf: LSB_JOBID"}));
  EXPECT_EQ(d.port_candidates, candidate_ports(5150));
  EXPECT_TRUE(d.warnings.empty());
}

TEST(LsfDetect, JsrunLaunchNodeIsSkipped) {
  util::Env env{{"LSB_JOBID", "5150"},
                {"LSB_MCPU_HOSTS", "batch3 1 h41n01 42 h41n02 42"},
                {"JSM_NAMESPACE_LOCAL_SIZE", "1"}};
  auto d = ok(detect_lsf(env, "h41n01"));
  EXPECT_EQ(d.hosts, (Hosts{"h41n01", "h41n02"}));
  EXPECT_EQ(d.node_rank->text, "0");
  EXPECT_EQ(d.rdzv_endpoint_host->text, "h41n01");
  EXPECT_EQ(d.tasks_on_node, (Value{"1", "lsf: JSM_NAMESPACE_LOCAL_SIZE"}));
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_TRUE(contains(d.warnings[0], "skipping launch node 'batch3'"));
  auto msg = err(detect_lsf(env, "batch3"));
  EXPECT_TRUE(contains(msg, "jsrun or blaunch")) << msg;
}

TEST(LsfDetect, PerSlotHostsAreDeduplicated) {
  util::Env env{{"LSB_JOBID", "9"}, {"LSB_HOSTS", "hA hA hB hB"}, {"LSB_JOBINDEX", "3"}};
  auto d = ok(detect_lsf(env, "hA"));
  EXPECT_EQ(d.hosts, (Hosts{"hA", "hB"}));
  EXPECT_EQ(d.nnodes->origin, "lsf: LSB_HOSTS");
  EXPECT_EQ(d.rdzv_id, (Value{"9.3", "lsf: LSB_JOBID + LSB_JOBINDEX"}));
}

TEST(LsfDetect, RejectsMalformedHostSlots) {
  for (const char* text : {"hA", "hA x", "hA 4 hB", "hA 0"}) {
    util::Env env{{"LSB_JOBID", "9"}, {"LSB_MCPU_HOSTS", text}};
    EXPECT_TRUE(contains(err(detect_lsf(env, "hA")), "LSB_MCPU_HOSTS")) << text;
  }
  EXPECT_TRUE(contains(err(detect_lsf({{"LSB_JOBID", "9"}}, "hA")), "neither"));
}

// --- Flux ---

TEST(FluxDetect, OneTaskPerNodeGivesNodesAndRank) {
  util::Env env{{"FLUX_JOB_ID",
                 "\xc6\x92"
                 "2WZ9aKXxDb"},
                {"FLUX_JOB_SIZE", "2"},
                {"FLUX_JOB_NNODES", "2"},
                {"FLUX_TASK_RANK", "1"},
                {"FLUX_TASK_LOCAL_ID", "0"}};
  auto d = ok(detect_flux(env));
  EXPECT_EQ(d.scheduler, "flux");
  EXPECT_EQ(d.rdzv_id, (Value{"f2WZ9aKXxDb", "flux: FLUX_JOB_ID"}));
  EXPECT_EQ(d.nnodes, (Value{"2", "flux: FLUX_JOB_SIZE (one task per node)"}));
  EXPECT_EQ(d.node_rank, (Value{"1", "flux: FLUX_TASK_RANK (one task per node)"}));
  EXPECT_FALSE(d.rdzv_endpoint_host.has_value());
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_TRUE(contains(d.warnings[0], "--rdzv-endpoint"));
}

TEST(FluxDetect, SeveralTasksPerNodeAreCounted) {
  util::Env env{{"FLUX_JOB_ID", "f3"},
                {"FLUX_JOB_SIZE", "8"},
                {"FLUX_JOB_NNODES", "2"},
                {"FLUX_TASK_RANK", "5"}};
  auto d = ok(detect_flux(env));
  EXPECT_FALSE(d.nnodes.has_value());
  EXPECT_EQ(d.tasks_on_node, (Value{"4", "flux: FLUX_JOB_SIZE / FLUX_JOB_NNODES"}));
}

// --- Open MPI / MPICH ---

TEST(MpiDetect, OpenMpiOneTaskPerNode) {
  util::Env env{{"OMPI_COMM_WORLD_SIZE", "4"},
                {"OMPI_COMM_WORLD_RANK", "2"},
                {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"},
                {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                {"PMIX_NAMESPACE", "prterun-host-123@1"}};
  auto d = ok(detect_mpi(env));
  EXPECT_EQ(d.scheduler, "openmpi");
  EXPECT_EQ(d.nnodes, (Value{"4", "openmpi: OMPI_COMM_WORLD_SIZE (one task per node)"}));
  EXPECT_EQ(d.node_rank, (Value{"2", "openmpi: OMPI_COMM_WORLD_RANK (one task per node)"}));
  EXPECT_EQ(d.rdzv_id, (Value{"prterun-host-123_1", "openmpi: PMIX_NAMESPACE"}));
  EXPECT_EQ(d.tasks_on_node->text, "1");
}

TEST(MpiDetect, OpenMpiSeveralTasksPerNodeGivesNoNodeCount) {
  util::Env env{{"OMPI_COMM_WORLD_SIZE", "8"},
                {"OMPI_COMM_WORLD_RANK", "2"},
                {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}};
  auto d = ok(detect_mpi(env));
  EXPECT_FALSE(d.nnodes.has_value());
  EXPECT_EQ(d.tasks_on_node, (Value{"4", "openmpi: OMPI_COMM_WORLD_LOCAL_SIZE"}));
}

TEST(MpiDetect, MpichHydraVariables) {
  util::Env env{
      {"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"MPI_LOCALNRANKS", "1"}, {"MPI_LOCALRANKID", "0"}};
  auto d = ok(detect_mpi(env));
  EXPECT_EQ(d.scheduler, "mpich");
  EXPECT_EQ(d.nnodes, (Value{"2", "mpich: PMI_SIZE (one task per node)"}));
  EXPECT_EQ(d.node_rank, (Value{"1", "mpich: PMI_RANK (one task per node)"}));
  EXPECT_FALSE(d.rdzv_id.has_value());
}

TEST(MpiDetect, RejectsRankOutsideSize) {
  util::Env env{{"PMI_RANK", "2"}, {"PMI_SIZE", "2"}, {"MPI_LOCALNRANKS", "1"}};
  EXPECT_TRUE(contains(err(detect_mpi(env)), "mpich: PMI_RANK='2'"));
}

TEST(MpiDetect, AbsentWithoutRuntimeVariables) {
  EXPECT_FALSE(ok(detect_mpi({{"PMI_RANK", "0"}})).is_present());
  EXPECT_FALSE(ok(detect_flux({})).is_present());
  EXPECT_FALSE(ok(detect_lsf({}, "h")).is_present());
  EXPECT_FALSE(ok(detect_pbs({}, "h\n", "h")).is_present());
}

}  // namespace
}  // namespace ddprun::sched
