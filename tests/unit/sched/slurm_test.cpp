// Slurm env fixtures: batch script (job view), srun step with one task per node, srun with
// several tasks per node, heterogeneous job, and malformed inputs.

#include "ddprun/sched/detect.hpp"
#include "ddprun/sched/ports.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace ddprun::sched {
namespace {

using Hosts = std::vector<std::string>;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// sbatch script on the first node of a 2-node job: no step variables.
util::Env batch_two_nodes() {
  return {{"SLURM_JOB_ID", "4242"},          {"SLURM_JOB_NODELIST", "gpu-[01-02]"},
          {"SLURM_JOB_NUM_NODES", "2"},      {"SLURM_NNODES", "2"},
          {"SLURM_NODELIST", "gpu-[01-02]"}, {"SLURM_TASKS_PER_NODE", "1(x2)"},
          {"SLURM_GPUS_ON_NODE", "4"},       {"SLURM_RESTART_COUNT", "1"},
          {"SLURMD_NODENAME", "gpu-01"},     {"SLURM_JOB_CPUS_PER_NODE", "72(x2)"}};
}

/// `srun -N2 --ntasks-per-node=1 ddprun` inside a 4-node job, seen on the step's second node.
util::Env step_one_task_per_node() {
  return {{"SLURM_JOB_ID", "4242"},
          {"SLURM_JOB_NODELIST", "gpu-[01-04]"},
          {"SLURM_JOB_NUM_NODES", "4"},
          {"SLURM_NODELIST", "gpu-[01-04]"},
          {"SLURM_NNODES", "2"},
          {"SLURM_STEP_ID", "3"},
          {"SLURM_STEP_NODELIST", "gpu-[03-04]"},
          {"SLURM_STEP_NUM_NODES", "2"},
          {"SLURM_STEP_NUM_TASKS", "2"},
          {"SLURM_STEP_TASKS_PER_NODE", "1(x2)"},
          {"SLURM_NODEID", "1"},
          {"SLURM_PROCID", "1"},
          {"SLURM_LOCALID", "0"},
          {"SLURMD_NODENAME", "gpu-04"},
          {"SLURM_GPUS_ON_NODE", "4"},
          {"CUDA_VISIBLE_DEVICES", "0,1,2,3"}};
}

Detected detect_ok(const util::Env& env) {
  auto d = detect_slurm(env);
  EXPECT_TRUE(d.has_value()) << (d ? "" : d.error().message);
  return d ? *d : Detected{};
}

std::string detect_error(const util::Env& env) {
  auto d = detect_slurm(env);
  EXPECT_FALSE(d.has_value());
  return d ? "" : d.error().message;
}

TEST(SlurmDetect, AbsentWithoutJobId) {
  EXPECT_FALSE(detect_ok({{"SLURM_NODEID", "0"}, {"PATH", "/bin"}}).is_present());
}

TEST(SlurmDetect, BatchScriptOfMultiNodeJobWarnsAndLeavesNodesAlone) {
  auto d = detect_ok(batch_two_nodes());
  EXPECT_EQ(d.scheduler, "slurm");
  EXPECT_FALSE(d.nnodes.has_value());
  EXPECT_FALSE(d.node_rank.has_value());
  EXPECT_FALSE(d.rdzv_endpoint_host.has_value());
  EXPECT_EQ(d.hosts, (Hosts{"gpu-01", "gpu-02"}));
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_TRUE(contains(d.warnings[0], "starts itself on every node through srun")) << d.warnings[0];
  EXPECT_EQ(d.rdzv_id, (Value{"4242.batch.r1", "slurm: SLURM_JOB_ID + SLURM_RESTART_COUNT"}));
  EXPECT_EQ(d.restart_epoch, (Value{"1", "slurm: SLURM_RESTART_COUNT"}));
  EXPECT_EQ(d.nproc_hint, (Value{"4", "slurm: SLURM_GPUS_ON_NODE"}));
}

TEST(SlurmDetect, BatchScriptOfOneNodeJobIsComplete) {
  auto env = batch_two_nodes();
  env.set("SLURM_JOB_NODELIST", "gpu-07");
  env.set("SLURMD_NODENAME", "gpu-07");
  auto d = detect_ok(env);
  EXPECT_EQ(d.nnodes, (Value{"1", "slurm: SLURM_JOB_NODELIST (one-node job)"}));
  EXPECT_EQ(d.node_rank, (Value{"0", "slurm: SLURM_JOB_NODELIST (one-node job)"}));
  EXPECT_EQ(d.rdzv_endpoint_host->text, "gpu-07");
  EXPECT_TRUE(d.warnings.empty());
}

TEST(SlurmDetect, SallocShellOnALoginNodeIsNotANode) {
  auto env = batch_two_nodes();
  env.set("SLURM_JOB_NODELIST", "gpu-07");
  env.unset("SLURMD_NODENAME");
  auto d = detect_ok(env);
  EXPECT_FALSE(d.nnodes.has_value());
  EXPECT_FALSE(d.rdzv_endpoint_host.has_value());
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_TRUE(contains(d.warnings[0], "login node")) << d.warnings[0];
}

TEST(SlurmDetect, RejectsEmptyStepNodelist) {
  auto env = step_one_task_per_node();
  env.set("SLURM_STEP_NODELIST", " ");
  EXPECT_TRUE(contains(detect_error(env), "lists no hosts"));
}

TEST(SlurmDetect, StepViewBeatsJobView) {
  auto d = detect_ok(step_one_task_per_node());
  EXPECT_EQ(d.hosts, (Hosts{"gpu-03", "gpu-04"}));
  EXPECT_EQ(d.nnodes, (Value{"2", "slurm: SLURM_STEP_NUM_NODES"}));
  EXPECT_EQ(d.node_rank, (Value{"1", "slurm: SLURM_NODEID"}));
  EXPECT_EQ(d.rdzv_endpoint_host, (Value{"gpu-03", "slurm: SLURM_STEP_NODELIST (first host)"}));
  EXPECT_EQ(d.rdzv_id, (Value{"4242.3", "slurm: SLURM_JOB_ID + SLURM_STEP_ID"}));
  EXPECT_EQ(d.tasks_on_node, (Value{"1", "slurm: SLURM_STEP_TASKS_PER_NODE"}));
  EXPECT_TRUE(d.warnings.empty()) << d.warnings.front();
}

TEST(SlurmDetect, VisibleDevicesBeatGpusOnNodeForTheHint) {
  auto env = step_one_task_per_node();
  env.set("CUDA_VISIBLE_DEVICES", "0,1");
  EXPECT_EQ(detect_ok(env).nproc_hint, (Value{"2", "env: CUDA_VISIBLE_DEVICES"}));
  env.unset("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(detect_ok(env).nproc_hint, (Value{"4", "slurm: SLURM_GPUS_ON_NODE"}));
}

TEST(SlurmDetect, PortIsDerivedFromJobAndStep) {
  auto d = detect_ok(step_one_task_per_node());
  ASSERT_EQ(d.port_candidates.size(), static_cast<std::size_t>(k_port_candidates));
  EXPECT_EQ(d.port_candidates, candidate_ports(4242 + 3));
  EXPECT_EQ(d.rdzv_port, (Value{"30645", "slurm: SLURM_JOB_ID + SLURM_STEP_ID"}));
  auto other_step = step_one_task_per_node();
  other_step.set("SLURM_STEP_ID", "4");
  auto d4 = detect_ok(other_step);
  EXPECT_NE(d4.rdzv_port->text, d.rdzv_port->text);
  EXPECT_NE(d4.rdzv_id->text, d.rdzv_id->text);
}

TEST(SlurmDetect, RequeuedJobGetsAFreshRunIdAndPortWindow) {
  auto first = detect_ok(step_one_task_per_node());
  EXPECT_FALSE(first.restart_epoch.has_value());
  auto env = step_one_task_per_node();
  env.set("SLURM_RESTART_COUNT", "0");
  EXPECT_EQ(detect_ok(env).rdzv_id, first.rdzv_id);  // 0 = the first incarnation
  env.set("SLURM_RESTART_COUNT", "2");
  auto requeued = detect_ok(env);
  EXPECT_EQ(requeued.restart_epoch, (Value{"2", "slurm: SLURM_RESTART_COUNT"}));
  EXPECT_EQ(requeued.rdzv_id,
            (Value{"4242.3.r2", "slurm: SLURM_JOB_ID + SLURM_STEP_ID + SLURM_RESTART_COUNT"}));
  EXPECT_EQ(requeued.port_candidates, candidate_ports(4242 + 3 + 2 * k_port_candidates));
  for (int p : first.port_candidates) {  // the windows of two incarnations do not overlap
    EXPECT_EQ(std::count(requeued.port_candidates.begin(), requeued.port_candidates.end(), p), 0);
  }
  EXPECT_EQ(requeued.rdzv_port->origin,
            "slurm: SLURM_JOB_ID + SLURM_STEP_ID + SLURM_RESTART_COUNT");
  env.set("SLURM_RESTART_COUNT", "x");
  EXPECT_FALSE(detect_slurm(env).has_value());
}

TEST(SlurmDetect, ReservedStepPortsWin) {
  auto env = step_one_task_per_node();
  env.set("SLURM_STEP_RESV_PORTS", "12000-12002");
  auto d = detect_ok(env);
  EXPECT_EQ(d.port_candidates, (std::vector<int>{12000, 12001, 12002}));
  EXPECT_EQ(d.rdzv_port, (Value{"12000", "slurm: SLURM_STEP_RESV_PORTS"}));
}

TEST(SlurmDetect, LegacyVariableNamesAreRead) {
  auto env = step_one_task_per_node();
  env.unset("SLURM_JOB_ID");
  env.unset("SLURM_STEP_ID");
  env.set("SLURM_JOBID", "77");
  env.set("SLURM_STEPID", "0");
  EXPECT_EQ(detect_ok(env).rdzv_id, (Value{"77.0", "slurm: SLURM_JOBID + SLURM_STEPID"}));
}

TEST(SlurmDetect, NnodesFallsBackToStepNnodes) {
  auto env = step_one_task_per_node();
  env.unset("SLURM_STEP_NUM_NODES");
  EXPECT_EQ(detect_ok(env).nnodes, (Value{"2", "slurm: SLURM_NNODES"}));
}

TEST(SlurmDetect, SeveralTasksPerNodeAreCountedForThisNode) {
  auto env = step_one_task_per_node();
  env.set("SLURM_STEP_TASKS_PER_NODE", "1,8");
  EXPECT_EQ(detect_ok(env).tasks_on_node, (Value{"8", "slurm: SLURM_STEP_TASKS_PER_NODE"}));
  env.unset("SLURM_STEP_TASKS_PER_NODE");
  env.set("SLURM_NTASKS_PER_NODE", "4");
  EXPECT_EQ(detect_ok(env).tasks_on_node, (Value{"4", "slurm: SLURM_NTASKS_PER_NODE"}));
}

TEST(SlurmDetect, RejectsNodelistThatDisagreesWithNodeCount) {
  auto env = step_one_task_per_node();
  env.set("SLURM_STEP_NUM_NODES", "3");
  auto msg = detect_error(env);
  EXPECT_TRUE(
      contains(msg, "expected the number of hosts in SLURM_STEP_NODELIST='gpu-[03-04]' (2)"))
      << msg;
  EXPECT_TRUE(contains(msg, "SLURM_STEP_NUM_NODES='3'")) << msg;
}

TEST(SlurmDetect, RejectsNodeIdOutsideTheStep) {
  auto env = step_one_task_per_node();
  env.set("SLURM_NODEID", "2");
  EXPECT_TRUE(contains(detect_error(env), "SLURM_NODEID='2': expected an integer in [0, 1]"));
  env.unset("SLURM_NODEID");
  EXPECT_TRUE(contains(detect_error(env), "SLURM_NODEID is not set"));
}

TEST(SlurmDetect, RejectsBadNodelistNamingTheVariable) {
  auto env = step_one_task_per_node();
  env.set("SLURM_STEP_NODELIST", "gpu-[04-03]");
  auto msg = detect_error(env);
  EXPECT_TRUE(contains(msg, "slurm: SLURM_STEP_NODELIST: hostlist 'gpu-[04-03]'")) << msg;
}

TEST(SlurmDetect, RejectsNonNumericJobIdAndRestartCount) {
  auto env = step_one_task_per_node();
  env.set("SLURM_JOB_ID", "42x");
  EXPECT_TRUE(contains(detect_error(env), "SLURM_JOB_ID='42x'"));
  env = step_one_task_per_node();
  env.set("SLURM_RESTART_COUNT", "-1");
  EXPECT_TRUE(contains(detect_error(env), "SLURM_RESTART_COUNT"));
}

TEST(SlurmDetect, WarnsWhenNodeIdNamesAnotherHost) {
  auto env = step_one_task_per_node();
  env.set("SLURMD_NODENAME", "gpu-03");
  auto d = detect_ok(env);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_TRUE(contains(d.warnings[0], "SLURMD_NODENAME is 'gpu-03'")) << d.warnings[0];
}

TEST(SlurmDetect, HeterogeneousJobStepUsesTheStepView) {
  auto env = step_one_task_per_node();
  env.set("SLURM_HET_SIZE", "2");
  env.set("SLURM_JOB_NODELIST_HET_GROUP_0", "gpu-[01-02]");
  env.set("SLURM_JOB_NODELIST_HET_GROUP_1", "gpu-[03-04]");
  auto d = detect_ok(env);
  EXPECT_EQ(d.hosts, (Hosts{"gpu-03", "gpu-04"}));
  EXPECT_EQ(d.node_rank->text, "1");
}

TEST(SlurmDetect, HeterogeneousJobBatchScriptWarns) {
  auto env = batch_two_nodes();
  env.set("SLURM_HET_SIZE", "2");
  auto d = detect_ok(env);
  ASSERT_EQ(d.warnings.size(), 2u);
  EXPECT_TRUE(contains(d.warnings[1], "heterogeneous")) << d.warnings[1];
}

TEST(SlurmDetect, DoubleLaunchIsRefusedWithAnExplanation) {
  auto env = step_one_task_per_node();
  env.set("SLURM_STEP_TASKS_PER_NODE", "8(x2)");
  env.set("CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7");
  auto d = detect(env, HostInputs{});
  ASSERT_FALSE(d.has_value());
  const auto& msg = d.error().message;
  EXPECT_EQ(d.error().code, ErrorCode::config);
  EXPECT_TRUE(contains(msg, "double launch: 8 ddprun tasks")) << msg;
  EXPECT_TRUE(contains(msg, "SLURM_STEP_TASKS_PER_NODE")) << msg;
  EXPECT_TRUE(contains(msg, "64 in all")) << msg;
  EXPECT_TRUE(contains(msg, "srun --ntasks-per-node=1")) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos);
}

TEST(SlurmDetect, SeveralTasksWithOneWorkerEachAreAccepted) {
  auto env = step_one_task_per_node();
  env.set("SLURM_STEP_TASKS_PER_NODE", "8(x2)");
  env.set("CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7");
  HostInputs host;
  host.requested_nproc = 1;
  EXPECT_TRUE(detect(env, host).has_value());
  env.set("CUDA_VISIBLE_DEVICES", "3");  // --gpus-per-task=1: one GPU per task
  EXPECT_TRUE(detect(env, HostInputs{}).has_value());
}

}  // namespace
}  // namespace ddprun::sched

namespace ddprun::sched {
namespace {

util::Env with(util::Env env, const std::string& addr, const std::string& pattern) {
  env.set("SLURM_TOPOLOGY_ADDR", addr);
  env.set("SLURM_TOPOLOGY_ADDR_PATTERN", pattern);
  return env;
}

TEST(SlurmTopology, ABlockIsTheDomainAndThePlaceFromSlurm2405) {
  auto d = detect_ok(with(step_one_task_per_node(), "b8.gpu-04", "block.node"));
  EXPECT_EQ(d.topology, (Value{"b8", "slurm: SLURM_TOPOLOGY_ADDR"}));
  EXPECT_EQ(d.block, (Value{"b8", "slurm: SLURM_TOPOLOGY_ADDR (block)"}));
}

TEST(SlurmTopology, TreeSwitchesGiveAPlaceButNoDomain) {
  auto d =
      detect_ok(with(step_one_task_per_node(), "s0.s4.s8.gpu-04", "switch.switch.switch.node"));
  EXPECT_EQ(d.topology, (Value{"s0.s4.s8", "slurm: SLURM_TOPOLOGY_ADDR"}));
  EXPECT_FALSE(d.block);
}

TEST(SlurmTopology, ANodeNameWithDotsStaysTheNode) {
  auto d = detect_ok(with(step_one_task_per_node(), "b2.gpu-04.cluster.org", "block.node"));
  EXPECT_EQ(d.block, (Value{"b2", "slurm: SLURM_TOPOLOGY_ADDR (block)"}));
}

TEST(SlurmTopology, FlatTopologyOldSlurmAndTheBatchScriptSayNothing) {
  EXPECT_FALSE(detect_ok(with(step_one_task_per_node(), "gpu-04", "node")).topology);
  EXPECT_FALSE(detect_ok(step_one_task_per_node()).topology);  // 23.11 with topology/block
  auto batch = detect_ok(with(batch_two_nodes(), "b8.gpu-01", "block.node"));
  EXPECT_FALSE(batch.topology) << "the batch host's place is not this node's";
  EXPECT_FALSE(detect_ok(with(step_one_task_per_node(), "b8", "block.node")).topology);
}

}  // namespace
}  // namespace ddprun::sched
