// Fan-out decisions and node command lines, as tables of inputs and expected argv.
#include "ddprun/fanout/plan.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ddprun::fanout {
namespace {

using Args = std::vector<std::string>;

sched::Detected pbs_job(std::vector<std::string> hosts) {
  sched::Detected d;
  d.scheduler = "pbs";
  d.hosts = std::move(hosts);
  d.rdzv_port = sched::Value{"30642", "pbs: PBS_JOBID"};
  d.rdzv_id = sched::Value{"1242", "pbs: PBS_JOBID"};
  return d;
}

sched::Detected slurm_batch(std::vector<std::string> hosts) {
  auto d = pbs_job(std::move(hosts));
  d.scheduler = "slurm";
  d.rdzv_id = sched::Value{"77.batch", "slurm: SLURM_JOB_ID"};
  return d;
}

cli::ParsedArgs parsed(const Args& args, const util::Env& env = {}) {
  auto p = cli::parse_args(args, env);
  EXPECT_TRUE(p) << p.error().message;
  return *p;
}

/// `args` resolved as the app does for a launch that fans out: over the whole job's view.
config::LaunchConfig resolved(const cli::ParsedArgs& args, const sched::Detected& d,
                              const util::Env& env = {}) {
  auto cfg = config::resolve(args, env, config::HostFacts{}, whole_job_view(d));
  EXPECT_TRUE(cfg) << cfg.error().message;
  return cfg ? *cfg : config::LaunchConfig{};
}

Result<Target> target_of(const Args& args, const sched::Detected& d, const util::Env& env = {}) {
  return make_target(resolved(parsed(args, env), d, env), d.hosts);
}

Result<std::optional<Plan>> plan_of(const sched::Detected& d, const util::Env& env,
                                    const PlanInputs& in) {
  auto args = parsed(in.args, env);
  return make_plan(resolved(args, d, env), args, d, env, in);
}

Result<std::optional<Via>> decide(const std::string& launcher, const sched::Detected& d,
                                  const util::Env& env = {}) {
  return decide_via(launcher, d, env);
}

TEST(FanoutDecide, AutoPicksPbsdshInAMultiNodePbsJobScript) {
  util::Env job_script{{"PBS_TASKNUM", "1"}, {"PBS_NODENUM", "0"}};
  auto via = decide("auto", pbs_job({"n1", "n2"}), job_script);
  ASSERT_TRUE(via);
  EXPECT_EQ(*via, std::optional<Via>(Via::pbsdsh));
}

TEST(FanoutDecide, AutoPicksSrunInAMultiNodeSlurmBatchScript) {
  auto via = decide("auto", slurm_batch({"n1", "n2", "n3"}));
  ASSERT_TRUE(via);
  EXPECT_EQ(*via, std::optional<Via>(Via::srun));
}

TEST(FanoutDecide, NoFanOutWhenAlreadyStartedPerNodeOrSingleNode) {
  struct Row {
    const char* why;
    sched::Detected d;
    util::Env env;
  };
  const std::vector<Row> rows = {
      {"one node", pbs_job({"n1"}), {}},
      {"pbsdsh task on a sister node", pbs_job({"n1", "n2"}), {{"PBS_NODENUM", "1"}}},
      {"pbsdsh task on the head", pbs_job({"n1", "n2"}), {{"PBS_TASKNUM", "3"}}},
      {"srun step", slurm_batch({"n1", "n2"}), {{"SLURM_STEP_NODELIST", "n1"}}},
      {"mpiexec under PBS", pbs_job({"n1", "n2"}), {{"PMI_RANK", "0"}}},
      {"mpirun under PBS", pbs_job({"n1", "n2"}), {{"OMPI_COMM_WORLD_SIZE", "2"}}},
      {"Cray PALS", pbs_job({"n1", "n2"}), {{"PALS_RANKID", "0"}}},
      {"a SkyPilot task's run section", pbs_job({"n1", "n2"}), {{"SKYPILOT_NODE_RANK", "1"}}},
      {"no scheduler", sched::Detected{}, {}},
  };
  for (const auto& row : rows) {
    auto via = decide("auto", row.d, row.env);
    ASSERT_TRUE(via) << row.why;
    EXPECT_FALSE(*via) << row.why;
  }
}

TEST(FanoutDecide, AutoDoesNotSshOnItsOwn) {
  auto lsf = pbs_job({"a", "b"});
  lsf.scheduler = "lsf";
  auto via = decide("auto", lsf);
  ASSERT_TRUE(via);
  EXPECT_FALSE(*via);
  auto ssh = decide("ssh", lsf);
  ASSERT_TRUE(ssh);
  EXPECT_EQ(*ssh, std::optional<Via>(Via::ssh));
}

TEST(FanoutDecide, NoneNeverFansOut) {
  auto via = decide("none", pbs_job({"n1", "n2"}));
  ASSERT_TRUE(via);
  EXPECT_FALSE(*via);
}

TEST(FanoutDecide, ExplicitLauncherThatCannotWorkIsAConfigError) {
  struct Row {
    std::string launcher;
    sched::Detected d;
    util::Env env;
    std::string message_part;
  };
  const std::vector<Row> rows = {
      {"pbsdsh", slurm_batch({"a", "b"}), {}, "not inside a PBS job"},
      {"srun", pbs_job({"a", "b"}), {}, "not inside a Slurm job"},
      {"ssh", pbs_job({"a"}), {}, "multi-node"},
      {"pbsdsh", pbs_job({"a", "b"}), {{"PBS_NODENUM", "1"}}, "--launcher none"},
  };
  for (const auto& row : rows) {
    auto via = decide(row.launcher, row.d, row.env);
    ASSERT_FALSE(via) << row.launcher;
    EXPECT_EQ(via.error().code, ErrorCode::config);
    EXPECT_NE(via.error().message.find(row.message_part), std::string::npos) << via.error().message;
  }
}

TEST(FanoutNodefile, FirstLineOfEachHostIsItsPbsdshIndex) {
  EXPECT_EQ(first_line_per_host("a\na\na\nb\nb\nb\n"), (std::vector<int>{0, 3}));
  EXPECT_EQ(first_line_per_host("a\n\n b \nc\n"), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(first_line_per_host(""), (std::vector<int>{}));
}

TEST(FanoutArgs, FlagsGoRightBeforeTheScriptAndItsSeparator) {
  const Args extra = {"--x", "1"};
  EXPECT_EQ(insert_before_script({"--nproc_per_node", "2", "train.py", "--lr", "1"}, 2, extra),
            (Args{"--nproc_per_node", "2", "--x", "1", "train.py", "--lr", "1"}));
  EXPECT_EQ(insert_before_script({"--standalone", "--", "train.py"}, 0, extra),
            (Args{"--standalone", "--x", "1", "--", "train.py"}));
  EXPECT_EQ(insert_before_script({"train.py"}, 0, extra), (Args{"--x", "1", "train.py"}));
}

TEST(FanoutTarget, HeadHostPortAndIdComeFromTheScheduler) {
  auto t = target_of({"train.py"}, pbs_job({"n1", "n2"}));
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->master_addr, "n1");
  EXPECT_EQ(t->master_port, 30642);
  EXPECT_EQ(t->rdzv_id, "1242");
  EXPECT_EQ(node_flags(*t, 1),
            (Args{"--nnodes", "2", "--node_rank", "1", "--rdzv_id", "1242", "--master_addr", "n1",
                  "--master_port", "30642", "--launcher", "none"}));
}

TEST(FanoutTarget, UserValuesWinAndC10dGetsAnEndpoint) {
  auto t = target_of({"--rdzv_backend", "c10d", "--rdzv_endpoint", "head:1234", "--rdzv_id", "job",
                      "--nnodes", "2", "train.py"},
                     pbs_job({"n1", "n2", "n3"}));
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->hosts, (Args{"n1", "n2"}));
  EXPECT_EQ(node_flags(*t, 0), (Args{"--nnodes", "2", "--node_rank", "0", "--rdzv_id", "job",
                                     "--rdzv_endpoint", "head:1234", "--launcher", "none"}));
  auto port = target_of({"train.py"}, pbs_job({"a", "b"}), {{"PET_MASTER_PORT", "4000"}});
  ASSERT_TRUE(port);
  EXPECT_EQ(port->master_port, 4000);
}

TEST(FanoutTarget, ElasticOrOversizedNodeCountIsRefused) {
  auto elastic = target_of({"--nnodes", "1:2", "train.py"}, pbs_job({"a", "b"}));
  ASSERT_FALSE(elastic);
  EXPECT_EQ(elastic.error().code, ErrorCode::config);
  EXPECT_EQ(elastic.error().message, "fan-out needs a fixed node count, not --nnodes '1:2'");
  auto from_env = target_of({"train.py"}, pbs_job({"a", "b"}), {{"PET_NNODES", "2:4"}});
  ASSERT_FALSE(from_env);
  EXPECT_EQ(from_env.error().message, "fan-out needs a fixed node count, not PET_NNODES '2:4'");
  auto oversized = target_of({"--nnodes", "3", "train.py"}, pbs_job({"a", "b"}));
  ASSERT_FALSE(oversized);
  EXPECT_EQ(oversized.error().code, ErrorCode::config);
  EXPECT_EQ(oversized.error().message, "--nnodes 3 but the job has 2 nodes");
}

TEST(FanoutTarget, ASlurmBatchScriptsJobViewBecomesTheWholeJob) {
  // Outside a step Slurm lists the hosts but gives no node count or head host: a launch there
  // runs on its node only, unless it fans out.
  auto d = slurm_batch({"a", "b", "c"});
  auto whole = whole_job_view(d);
  ASSERT_TRUE(whole.nnodes);
  EXPECT_EQ(whole.nnodes->text, "3");
  ASSERT_TRUE(whole.rdzv_endpoint_host);
  EXPECT_EQ(whole.rdzv_endpoint_host->text, "a");
  auto t = target_of({"train.py"}, d);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->hosts, (Args{"a", "b", "c"}));
  EXPECT_EQ(node_flags(*t, 2),
            (Args{"--nnodes", "3", "--node_rank", "2", "--rdzv_id", "77.batch", "--master_addr",
                  "a", "--master_port", "30642", "--launcher", "none"}));
  EXPECT_FALSE(whole_job_view(slurm_batch({"a"})).nnodes) << "one host: nothing to fan out";
}

TEST(FanoutTarget, OtherBackendsGetTheResolvedEndpoint) {
  // resolve(): c10d ignores --master_port (with a warning); the scheduler's endpoint stands.
  auto t = target_of({"--rdzv_backend", "c10d", "--master_port", "4000", "train.py"},
                     pbs_job({"n1", "n2"}));
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(node_flags(*t, 1), (Args{"--nnodes", "2", "--node_rank", "1", "--rdzv_id", "1242",
                                     "--rdzv_endpoint", "n1:30642", "--launcher", "none"}));
  auto v6 = target_of({"--rdzv_backend", "c10d", "--rdzv_endpoint", "[fd00::1]:29400", "train.py"},
                      pbs_job({"n1", "n2"}));
  ASSERT_TRUE(v6) << v6.error().message;
  EXPECT_EQ(v6->rdzv_endpoint, "[fd00::1]:29400");
  auto etcd = target_of({"--rdzv_backend", "etcd-v3", "--rdzv_endpoint", "e1,e2:2390", "train.py"},
                        pbs_job({"n1", "n2"}));
  ASSERT_TRUE(etcd) << etcd.error().message;
  EXPECT_EQ(etcd->rdzv_id, "1242");
  EXPECT_EQ(etcd->rdzv_endpoint, "http://e1:2379,http://e2:2390") << "every member, as resolved";
}

TEST(FanoutDecide, LauncherNoneOrAnExplicitNodeRankMeansNoFanOut) {
  auto none = parsed({"--launcher", "none", "train.py"});
  auto via = fan_out_via(none, slurm_batch({"a", "b"}), {});
  ASSERT_TRUE(via);
  EXPECT_FALSE(*via);
  via = fan_out_via(parsed({"--node_rank", "1", "train.py"}), slurm_batch({"a", "b"}), {});
  ASSERT_TRUE(via);
  EXPECT_FALSE(*via);
  via = fan_out_via(parsed({"train.py"}), slurm_batch({"a", "b"}), {});
  ASSERT_TRUE(via);
  EXPECT_EQ(*via, std::optional<Via>(Via::srun));
}

TEST(FanoutEnv, ForwardsEverythingButPerHostAndPerTaskVariables) {
  util::Env env{
      {"PATH", "/venv/bin:/usr/bin"}, {"HOSTNAME", "n1"},        {"PBS_NODENUM", "0"},
      {"PBS_TASKNUM", "1"},           {"PBS_VNODENUM", "0"},     {"PBS_JOBFS", "/jobfs/1.s"},
      {"SLURM_PROCID", "0"},          {"SLURMD_NODENAME", "n1"}, {"CUDA_VISIBLE_DEVICES", "GPU-1"},
      {"SSH_AUTH_SOCK", "/tmp/s"},    {"NCCL_DEBUG", "INFO"},    {"PBS_JOBID", "1.s"}};
  EXPECT_EQ(forwarded_env(env),
            (Args{"NCCL_DEBUG=INFO", "PATH=/venv/bin:/usr/bin", "PBS_JOBID=1.s"}));
}

TEST(FanoutQuote, ShellQuotingSurvivesQuotesSpacesAndDollars) {
  EXPECT_EQ(shell_quote("plain/path-1.py"), "plain/path-1.py");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("a b$HOME;`x`"), "'a b$HOME;`x`'");
  EXPECT_EQ(shell_quote("K=v w"), "'K=v w'");
}

NodeInputs node(Via via) {
  return NodeInputs{via, "n2", 1, 48, "/scratch/my job", {"A=1", "B=x y"}, {"/bin/ddprun", "t.py"}};
}

TEST(FanoutCommand, PbsdshRunsAShellThatChangesDirectoryThenEnv) {
  EXPECT_EQ(node_command(node(Via::pbsdsh)),
            (Args{"pbsdsh", "-n", "48", "--", "/bin/sh", "-c", "cd \"$1\" && shift && exec \"$@\"",
                  "sh", "/scratch/my job", "/usr/bin/env", "A=1", "B=x y", "/bin/ddprun", "t.py"}));
}

TEST(FanoutCommand, SrunOneTaskOnTheNamedNodeWithTheWholeEnvironment) {
  EXPECT_EQ(node_command(node(Via::srun)),
            (Args{"srun", "--nodes=1", "--ntasks=1", "--ntasks-per-node=1", "--nodelist=n2",
                  "--export=ALL", "--input=none", "/bin/ddprun", "t.py"}));
}

TEST(FanoutCommand, SshQuotesEveryWordOfTheRemoteCommand) {
  EXPECT_EQ(node_command(node(Via::ssh)),
            (Args{"ssh", "-n", "-o", "BatchMode=yes", "n2",
                  "cd '/scratch/my job' && exec /usr/bin/env A=1 'B=x y' /bin/ddprun t.py"}));
}

TEST(FanoutPlan, PbsPlanGivesEachNodeItsVnodeRankAndNodenum) {
  util::Env env{{"PBS_TASKNUM", "1"}, {"PBS_NODENUM", "0"}, {"PATH", "/bin"}};
  PlanInputs in{{"--nproc_per_node", "4", "train.py", "--epochs", "2"},
                "/opt/ddprun",
                "/w",
                "n1\nn1\nn2\nn2\n"};
  auto plan = plan_of(pbs_job({"n1", "n2"}), env, in);
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_TRUE(*plan);
  ASSERT_EQ((*plan)->nodes.size(), 2u);
  const auto& second = (*plan)->nodes[1];
  EXPECT_EQ(second.host, "n2");
  EXPECT_EQ(second.node_rank, 1);
  EXPECT_EQ(second.argv, (Args{"pbsdsh",
                               "-n",
                               "2",
                               "--",
                               "/bin/sh",
                               "-c",
                               "cd \"$1\" && shift && exec \"$@\"",
                               "sh",
                               "/w",
                               "/usr/bin/env",
                               "PATH=/bin",
                               "PBS_NODENUM=1",
                               "/opt/ddprun",
                               "--nproc_per_node",
                               "4",
                               "--nnodes",
                               "2",
                               "--node_rank",
                               "1",
                               "--rdzv_id",
                               "1242",
                               "--master_addr",
                               "n1",
                               "--master_port",
                               "30642",
                               "--launcher",
                               "none",
                               "train.py",
                               "--epochs",
                               "2"}));
}

TEST(FanoutPlan, ExplicitNodeRankOneNodeOrStandaloneMeansNoFanOut) {
  PlanInputs in{{"--node_rank", "0", "train.py"}, "/opt/ddprun", "/w", ""};
  auto plan = plan_of(slurm_batch({"a", "b"}), {}, in);
  ASSERT_TRUE(plan);
  EXPECT_FALSE(*plan);
  in.args = {"--nnodes", "1", "train.py"};
  plan = plan_of(slurm_batch({"a", "b"}), {}, in);
  ASSERT_TRUE(plan);
  EXPECT_FALSE(*plan);
  in.args = {"--standalone", "train.py"};
  plan = plan_of(slurm_batch({"a", "b"}), {}, in);
  ASSERT_TRUE(plan);
  EXPECT_FALSE(*plan);
}

}  // namespace
}  // namespace ddprun::fanout
