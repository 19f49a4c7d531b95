// detect(): precedence between schedulers, origins text, and the cross-checks.

#include "ddprun/sched/detect.hpp"

#include <gtest/gtest.h>

namespace ddprun::sched {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

util::Env slurm_step() {
  return {{"SLURM_JOB_ID", "100"},
          {"SLURM_STEP_ID", "0"},
          {"SLURM_STEP_NODELIST", "n[1-2]"},
          {"SLURM_STEP_NUM_NODES", "2"},
          {"SLURM_NODEID", "0"},
          {"SLURM_STEP_TASKS_PER_NODE", "1(x2)"}};
}

util::Env with(util::Env env, const util::Env& more) {
  for (const auto& [k, v] : more.vars()) {
    env.set(k, v);
  }
  return env;
}

const util::Env k_pbs{{"PBS_JOBID", "7.server"}, {"PBS_NODEFILE", "/aux/7.server"}};
const util::Env k_lsf{{"LSB_JOBID", "8"}, {"LSB_MCPU_HOSTS", "n1 4"}};
const util::Env k_flux{{"FLUX_JOB_ID", "f9"},
                       {"FLUX_JOB_SIZE", "1"},
                       {"FLUX_JOB_NNODES", "1"},
                       {"FLUX_TASK_RANK", "0"}};
const util::Env k_ompi{{"OMPI_COMM_WORLD_SIZE", "1"},
                       {"OMPI_COMM_WORLD_RANK", "0"},
                       {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"}};
const util::Env k_mpich{{"PMI_RANK", "0"}, {"PMI_SIZE", "1"}, {"MPI_LOCALNRANKS", "1"}};
const util::Env k_skypilot{{"SKYPILOT_NODE_IPS", "10.0.0.5\n10.0.0.7"},
                           {"SKYPILOT_NUM_NODES", "2"},
                           {"SKYPILOT_NODE_RANK", "0"},
                           {"SKYPILOT_NUM_GPUS_PER_NODE", "4"},
                           {"SKYPILOT_TASK_ID", "sky-2024-05-01_train_7"}};

HostInputs host_n1() {
  HostInputs host;
  host.hostname = "n1";
  host.pbs_nodefile = "n1\n";
  return host;
}

std::string winner(const util::Env& env) {
  auto d = detect(env, host_n1());
  EXPECT_TRUE(d.has_value()) << (d ? "" : d.error().message);
  return d ? d->scheduler : "(error)";
}

TEST(DetectPrecedence, NothingPresentGivesEmpty) {
  auto d = detect({{"PATH", "/bin"}}, HostInputs{});
  ASSERT_TRUE(d.has_value());
  EXPECT_FALSE(d->is_present());
  EXPECT_EQ(render_detected(*d), "scheduler = none\n");
}

TEST(DetectPrecedence, EachSchedulerAloneIsFound) {
  EXPECT_EQ(winner(slurm_step()), "slurm");
  EXPECT_EQ(winner(k_pbs), "pbs");
  EXPECT_EQ(winner(k_lsf), "lsf");
  EXPECT_EQ(winner(k_flux), "flux");
  EXPECT_EQ(winner(k_skypilot), "skypilot");
  EXPECT_EQ(winner(k_ompi), "openmpi");
  EXPECT_EQ(winner(k_mpich), "mpich");
}

TEST(DetectPrecedence, SlurmBeatsPbs) { EXPECT_EQ(winner(with(slurm_step(), k_pbs)), "slurm"); }

TEST(DetectPrecedence, PbsBeatsLsf) { EXPECT_EQ(winner(with(k_pbs, k_lsf)), "pbs"); }

TEST(DetectPrecedence, LsfBeatsFlux) { EXPECT_EQ(winner(with(k_lsf, k_flux)), "lsf"); }

TEST(DetectPrecedence, FluxBeatsMpi) {
  EXPECT_EQ(winner(with(with(k_flux, k_ompi), k_mpich)), "flux");
}

// sbatch copies the submitting shell's SKYPILOT_* into the job: Slurm's own variables win.
TEST(DetectPrecedence, SlurmBeatsSkypilot) {
  EXPECT_EQ(winner(with(slurm_step(), k_skypilot)), "slurm");
  auto bad_sky = with(k_skypilot, {{"SKYPILOT_NODE_RANK", "9"}});
  EXPECT_EQ(winner(with(slurm_step(), bad_sky)), "slurm");  // the loser is not even read
}

TEST(DetectPrecedence, HpcSchedulersBeatSkypilot) {
  EXPECT_EQ(winner(with(k_pbs, k_skypilot)), "pbs");
  EXPECT_EQ(winner(with(k_lsf, k_skypilot)), "lsf");
  EXPECT_EQ(winner(with(k_flux, k_skypilot)), "flux");
}

TEST(DetectPrecedence, SkypilotBeatsMpi) {
  EXPECT_EQ(winner(with(with(k_skypilot, k_ompi), k_mpich)), "skypilot");
}

TEST(DetectPrecedence, OpenMpiBeatsMpich) { EXPECT_EQ(winner(with(k_ompi, k_mpich)), "openmpi"); }

TEST(DetectPrecedence, AllAtOnceGivesSlurm) {
  auto env =
      with(with(with(with(with(with(slurm_step(), k_pbs), k_lsf), k_flux), k_skypilot), k_ompi),
           k_mpich);
  EXPECT_EQ(winner(env), "slurm");
}

TEST(DetectPrecedence, AWinnersErrorIsNotSkipped) {
  auto env = with(slurm_step(), k_pbs);
  env.set("SLURM_NODEID", "9");
  auto d = detect(env, host_n1());
  ASSERT_FALSE(d.has_value());
  EXPECT_TRUE(contains(d.error().message, "slurm: SLURM_NODEID"));
}

TEST(DetectSkypilot, AnMpiRankThatContradictsTheNodeRankIsRefused) {
  // mpiexec -ppn 1 from the head node: Hydra copies the head's SKYPILOT_NODE_RANK=0 to node 1.
  auto env = with(k_skypilot, {{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"MPI_LOCALNRANKS", "1"}});
  auto d = detect(env, host_n1());
  ASSERT_FALSE(d.has_value());
  EXPECT_EQ(d.error().message,
            "skypilot: SKYPILOT_NODE_RANK='0' disagrees with node rank 1 from mpich: PMI_RANK (one "
            "task per node): mpiexec may have copied another node's SkyPilot variables; start "
            "ddprun from the task's run section on every node, or pass --no-auto");
  env.set("PMI_RANK", "0");  // the head node's own rank agrees
  EXPECT_EQ(winner(env), "skypilot");
}

TEST(DetectSkypilot, SeveralMpiRanksPerNodeAreADoubleLaunch) {
  auto env = with(k_skypilot, {{"OMPI_COMM_WORLD_SIZE", "8"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  auto host = host_n1();
  host.requested_nproc = 4;
  auto d = detect(env, host);
  ASSERT_FALSE(d.has_value());
  EXPECT_TRUE(contains(d.error().message, "4 ddprun tasks run on this node")) << d.error().message;
}

TEST(DetectPbs, UnreadNodefileIsAnError) {
  HostInputs host;
  host.hostname = "n1";
  auto d = detect(k_pbs, host);
  ASSERT_FALSE(d.has_value());
  EXPECT_EQ(d.error().message, "pbs: PBS_NODEFILE '/aux/7.server' was not read");
  util::Env no_path{{"PBS_JOBID", "7"}};
  EXPECT_FALSE(detect(no_path, host).has_value());
}

TEST(DetectOrigins, RenderedSlurmStepNamesEachVariable) {
  auto env = slurm_step();
  env.set("SLURM_RESTART_COUNT", "2");
  env.set("CUDA_VISIBLE_DEVICES", "0,1");
  auto d = detect(env, host_n1());
  ASSERT_TRUE(d.has_value()) << d.error().message;
  EXPECT_EQ(render_detected(*d),
            "scheduler = slurm\n"
            "nnodes = 2 (slurm: SLURM_STEP_NUM_NODES)\n"
            "node_rank = 0 (slurm: SLURM_NODEID)\n"
            "rdzv_endpoint_host = n1 (slurm: SLURM_STEP_NODELIST (first host))\n"
            "rdzv_port = 29516 (slurm: SLURM_JOB_ID + SLURM_STEP_ID + SLURM_RESTART_COUNT)\n"
            "rdzv_id = 100.0.r2 (slurm: SLURM_JOB_ID + SLURM_STEP_ID + SLURM_RESTART_COUNT)\n"
            "nproc_hint = 2 (env: CUDA_VISIBLE_DEVICES)\n"
            "restart_epoch = 2 (slurm: SLURM_RESTART_COUNT)\n"
            "tasks_on_node = 1 (slurm: SLURM_STEP_TASKS_PER_NODE)\n");
}

TEST(DetectOrigins, RenderedSkypilotNamesEachVariable) {
  auto d = detect(k_skypilot, host_n1());
  ASSERT_TRUE(d.has_value()) << d.error().message;
  const auto port = std::to_string(d->port_candidates.front());
  EXPECT_EQ(render_detected(*d),
            "scheduler = skypilot\n"
            "nnodes = 2 (skypilot: SKYPILOT_NUM_NODES)\n"
            "node_rank = 0 (skypilot: SKYPILOT_NODE_RANK)\n"
            "rdzv_endpoint_host = 10.0.0.5 (skypilot: SKYPILOT_NODE_IPS (first host))\n"
            "rdzv_port = " +
                port +
                " (skypilot: SKYPILOT_TASK_ID)\n"
                "rdzv_id = sky-2024-05-01_train_7 (skypilot: SKYPILOT_TASK_ID)\n"
                "nproc_hint = 4 (skypilot: SKYPILOT_NUM_GPUS_PER_NODE)\n");
}

TEST(DetectDoubleLaunch, RequestedNprocIsUsedOverTheHint) {
  auto env = slurm_step();
  env.set("SLURM_STEP_TASKS_PER_NODE", "4(x2)");
  auto host = host_n1();
  host.requested_nproc = 2;
  auto d = detect(env, host);
  ASSERT_FALSE(d.has_value());
  EXPECT_TRUE(contains(d.error().message, "each would start 2 workers (8 in all)"))
      << d.error().message;
  host.requested_nproc = 0;  // no request, no GPU hint: one worker each
  EXPECT_TRUE(detect(env, host).has_value());
}

TEST(DetectDoubleLaunch, JsrunWithSeveralTasksPerNodeIsRefused) {
  auto env = with(k_lsf, {{"JSM_NAMESPACE_LOCAL_SIZE", "6"}});
  auto host = host_n1();
  host.requested_nproc = 6;
  auto d = detect(env, host);
  ASSERT_FALSE(d.has_value());
  EXPECT_TRUE(contains(d.error().message, "lsf: JSM_NAMESPACE_LOCAL_SIZE")) << d.error().message;
}

TEST(DetectDoubleLaunch, MpirunUnderPbsIsRefused) {
  auto env = with(k_pbs, {{"OMPI_COMM_WORLD_SIZE", "8"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "8"}});
  auto host = host_n1();
  host.requested_nproc = 8;
  auto d = detect(env, host);
  ASSERT_FALSE(d.has_value());
  EXPECT_TRUE(contains(d.error().message, "env: OMPI_COMM_WORLD_LOCAL_SIZE")) << d.error().message;
}

}  // namespace
}  // namespace ddprun::sched

namespace ddprun::sched {
namespace {

TEST(DetectJob, SlurmThenPbsEachNeedingIdAndSubmitDir) {
  const util::Env both{{"SLURM_SUBMIT_DIR", "/home/u/run"},
                       {"SLURM_JOB_ID", "42"},
                       {"PBS_O_WORKDIR", "/scratch/w"},
                       {"PBS_JOBID", "7.server"}};
  EXPECT_EQ(detect_job(both), (Job{"42", "/home/u/run", "SLURM_SUBMIT_DIR"}));
  EXPECT_EQ(
      detect_job(util::Env{
          {"PBS_O_WORKDIR", "/scratch/w"}, {"PBS_JOBID", "7.server"}, {"SLURM_JOB_ID", "42"}}),
      (Job{"7.server", "/scratch/w", "PBS_O_WORKDIR"}));
  EXPECT_FALSE(detect_job(util::Env{{"SLURM_JOB_ID", "42"}}));
  EXPECT_FALSE(detect_job(util::Env{}));
}

TEST(DetectJob, DetectFillsTheJobEvenWithoutAScheduler) {
  auto d = detect(util::Env{{"PBS_O_WORKDIR", "/w"}}, HostInputs{});
  ASSERT_TRUE(d);
  EXPECT_FALSE(d->job);
  auto slurm = detect(util::Env{{"SLURM_JOB_ID", "9"}, {"SLURM_SUBMIT_DIR", "/s"}}, HostInputs{});
  ASSERT_TRUE(slurm) << slurm.error().message;
  EXPECT_EQ(slurm->job, (Job{"9", "/s", "SLURM_SUBMIT_DIR"}));
}

}  // namespace
}  // namespace ddprun::sched
