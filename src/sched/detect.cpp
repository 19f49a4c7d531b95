// detect(): the first scheduler present wins (Slurm > PBS > LSF > Flux > SkyPilot > Open MPI >
// MPICH), then the cross-checks: the srun x ddprun double launch, which needs the launch request,
// and a SkyPilot node rank that an MPI rank contradicts.
//
// SkyPilot comes after the HPC schedulers because their variables are set by the resource
// manager for this very task, while SKYPILOT_* are plain exported variables: sbatch, qsub and
// bsub copy the submitting shell's environment into the job by default, so a job submitted from
// a SkyPilot node carries that node's SKYPILOT_* into an allocation they do not describe.
// It comes before Open MPI and MPICH because these give a size and a rank but no head host,
// while SkyPilot names every node: an MPI rank variable in a SkyPilot task means ddprun runs
// under an mpiexec inside the task, which describes its ranks only. The one case where MPI is
// the better witness, mpiexec -ppn 1 across the task's nodes copying the head's SKYPILOT_*
// to every rank (MPICH's Hydra forwards the whole environment), is refused by the cross-check,
// and MPI's local size still feeds the double-launch check.

#include "ddprun/sched/detect.hpp"

#include "ddprun/sched/env_names.hpp"
#include "ddprun/util/strings.hpp"

#include <utility>

#include "common.hpp"

namespace ddprun::sched {

namespace {

namespace n = env_names;

Result<Detected> first_present(const util::Env& env, const HostInputs& host) {
  auto slurm = detect_slurm(env);
  if (!slurm || slurm->is_present()) {
    return slurm;
  }
  if (env.get_nonempty(n::k_pbs_jobid)) {
    auto path = env.get_nonempty(n::k_pbs_nodefile);
    if (!path) {
      return detail::config_error("pbs", "PBS_JOBID is set but PBS_NODEFILE is not");
    }
    if (!host.pbs_nodefile) {
      return detail::config_error("pbs", "PBS_NODEFILE " + util::quoted(*path) + " was not read");
    }
    return detect_pbs(env, *host.pbs_nodefile, host.hostname);
  }
  auto lsf = detect_lsf(env, host.hostname);
  if (!lsf || lsf->is_present()) {
    return lsf;
  }
  auto flux = detect_flux(env);
  if (!flux || flux->is_present()) {
    return flux;
  }
  auto skypilot = detect_skypilot(env);
  if (!skypilot || skypilot->is_present()) {
    return skypilot;
  }
  return detect_mpi(env);
}

/// One ddprun per node started by mpiexec has its node index in the MPI rank; a SkyPilot rank
/// that differs was most likely copied from the node mpiexec ran on.
Result<void> check_skypilot_rank(const Detected& d, const util::Env& env) {
  if (d.scheduler != "skypilot" || !d.node_rank) {
    return {};
  }
  auto mpi = detect_mpi(env);
  if (!mpi || !mpi->node_rank || mpi->node_rank->text == d.node_rank->text) {
    return {};
  }
  return detail::config_error(
      d.scheduler, "SKYPILOT_NODE_RANK=" + util::quoted(d.node_rank->text) +
                       " disagrees with node rank " + mpi->node_rank->text + " from " +
                       mpi->node_rank->origin +
                       ": mpiexec may have copied another node's SkyPilot variables; start " +
                       "ddprun from the task's run section on every node, or pass --no-auto");
}

/// A scheduler that does not count its tasks may still run under mpirun: use MPI's local size.
void add_mpi_local_size(Detected& d, const util::Env& env) {
  if (d.tasks_on_node) {
    return;
  }
  for (auto var : {n::k_ompi_local_size, n::k_mpi_localnranks}) {
    auto v = util::parse_int_in(env.get_nonempty(var).value_or(""), 1, INT32_MAX);
    if (v) {
      d.tasks_on_node = Value{std::to_string(*v), "env: " + std::string(var)};
      return;
    }
  }
}

/// The worker count the double-launch and CPU checks use: the request, else the GPU hint.
int effective_nproc(const Detected& d, const HostInputs& host) {
  if (host.requested_nproc > 0) {
    return host.requested_nproc;
  }
  auto hint = d.nproc_hint ? util::parse_int_in(d.nproc_hint->text, 1, INT32_MAX)
                           : Result<std::int64_t>(make_error(ErrorCode::config, ""));
  return hint ? static_cast<int>(*hint) : 1;
}

Result<void> check_double_launch(const Detected& d, int nproc) {
  if (!d.tasks_on_node) {
    return {};
  }
  const auto tasks = util::parse_int(d.tasks_on_node->text);
  if (!tasks || *tasks <= 1 || nproc <= 1) {
    return {};
  }
  const std::string var = d.tasks_on_node->origin;
  return make_error(ErrorCode::config,
                    "double launch: " + std::to_string(*tasks) +
                        " ddprun tasks run on this node (" + var + ") and each would start " +
                        std::to_string(nproc) + " workers (" + std::to_string(*tasks * nproc) +
                        " in all); start one ddprun per node " +
                        "(srun --ntasks-per-node=1 ddprun ...) or pass --nproc-per-node 1");
}

void render_line(std::string& out, std::string_view name, const std::optional<Value>& v) {
  if (v) {
    out += std::string(name) + " = " + v->text + " (" + v->origin + ")\n";
  }
}

}  // namespace

std::optional<Job> detect_job(const util::Env& env) {
  for (auto [job_var, dir_var] : {std::pair{n::k_slurm_job_id, n::k_slurm_submit_dir},
                                  std::pair{n::k_pbs_jobid, n::k_pbs_o_workdir}}) {
    auto dir = env.get_nonempty(dir_var);
    auto job = env.get_nonempty(job_var);
    if (dir && job) {
      return Job{*job, *dir, std::string(dir_var)};
    }
  }
  return std::nullopt;
}

Result<Detected> detect(const util::Env& env, const HostInputs& host) {
  auto d = first_present(env, host);
  if (!d) {
    return d;
  }
  add_mpi_local_size(*d, env);
  const int nproc = effective_nproc(*d, host);
  auto r = check_double_launch(*d, nproc);
  if (!r) {
    return r.error();
  }
  r = check_skypilot_rank(*d, env);
  if (!r) {
    return r.error();
  }
  d->job = detect_job(env);
  return d;
}

std::string render_detected(const Detected& d) {
  std::string out = "scheduler = " + (d.scheduler.empty() ? "none" : d.scheduler) + "\n";
  render_line(out, "nnodes", d.nnodes);
  render_line(out, "node_rank", d.node_rank);
  render_line(out, "rdzv_endpoint_host", d.rdzv_endpoint_host);
  render_line(out, "rdzv_port", d.rdzv_port);
  render_line(out, "rdzv_id", d.rdzv_id);
  render_line(out, "nproc_hint", d.nproc_hint);
  render_line(out, "restart_epoch", d.restart_epoch);
  render_line(out, "tasks_on_node", d.tasks_on_node);
  render_line(out, "topology", d.topology);
  render_line(out, "block", d.block);
  return out;
}

}  // namespace ddprun::sched
