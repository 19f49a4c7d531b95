#pragma once
// Scheduler auto-configuration: what Slurm, PBS, LSF, Flux, SkyPilot, Open MPI or MPICH tell a
// per-node launcher through its environment, as values tagged with where each came from.
// Everything here is pure: the environment, this host's name and the PBS nodefile's contents are
// passed in (detect_on_this_host in io.hpp is the shell that reads them).
//
// Precedence among schedulers (the first one present wins): Slurm > PBS > LSF/jsrun > Flux >
// SkyPilot > Open MPI > MPICH (detect.cpp says why). Explicit flags and PET_* variables beat all of
// these; applying that is config::resolve's job. --no-auto is the app's: it does not call detect()
// then.

#include "ddprun/util/env.hpp"
#include "ddprun/util/result.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ddprun::sched {

/// One detected setting: its text and where it came from, e.g. "slurm: SLURM_STEP_NUM_NODES".
struct Value {
  std::string text;
  std::string origin;

  friend bool operator==(const Value&, const Value&) = default;
};

/// The batch job this launch runs in, as the job's shared rendezvous token file needs it
/// (store::decide_token_source): its id and the directory it was submitted from.
struct Job {
  std::string id;
  std::string submit_dir;
  std::string submit_dir_var;  ///< the variable that gave submit_dir ("SLURM_SUBMIT_DIR")

  friend bool operator==(const Job&, const Job&) = default;
};

/// What one scheduler says about this launch. Unset optionals: the scheduler does not know.
struct Detected {
  /// "slurm", "pbs", "lsf", "flux", "skypilot", "openmpi", "mpich", or "" when none was found.
  std::string scheduler;
  std::optional<Value> nnodes;              ///< nodes in this launch (one ddprun per node)
  std::optional<Value> node_rank;           ///< this node's index in `hosts`, 0-based
  std::optional<Value> rdzv_endpoint_host;  ///< head host: first of `hosts`
  std::optional<Value> rdzv_port;           ///< first of `port_candidates`
  std::optional<Value> rdzv_id;             ///< run id shared by every node of this launch
  std::optional<Value> nproc_hint;          ///< workers per node suggested by visible GPUs
  std::optional<Value> restart_epoch;       ///< scheduler-level restarts (Slurm requeues)
  std::optional<Value> tasks_on_node;       ///< copies of ddprun the scheduler started here
  /// This node's place in the scheduler's topology, less the node itself ("s0.s4", "b8"): the
  /// first key of the infrastructure order (rdzv/rank_order.hpp).
  std::optional<Value> topology;
  std::optional<Value> block;         ///< its topology/block block (Slurm 24.05+): a node domain
  std::vector<int> port_candidates;   ///< deterministic per job; the head binds the first free
  std::vector<std::string> hosts;     ///< the launch's nodes, in order, deduplicated
  std::vector<std::string> warnings;  ///< one line each, to be logged by the app
  std::optional<Job> job;             ///< detect_job(env); set even when no scheduler is

  bool is_present() const { return !scheduler.empty(); }
};

/// Inputs from outside the environment, gathered by the app's shell.
struct HostInputs {
  std::string hostname;                     ///< gethostname(); short or FQDN
  std::optional<std::string> pbs_nodefile;  ///< contents of $PBS_NODEFILE when it was read
  int requested_nproc = 0;                  ///< --nproc-per-node as a number, 0 when not given
};

/// Slurm (spec §1.2): step view when inside a srun step, job view otherwise.
Result<Detected> detect_slurm(const util::Env& env);
/// PBS Pro / OpenPBS / Torque: hosts from the nodefile, deduplicated in order.
Result<Detected> detect_pbs(const util::Env& env, const std::string& nodefile_contents,
                            const std::string& this_hostname);
/// LSF: hosts from LSB_MCPU_HOSTS ("hostA 4 hostB 4"), skipping a jsrun launch node.
Result<Detected> detect_lsf(const util::Env& env, const std::string& this_hostname);
/// Flux: job size, node count and task rank; Flux's host list needs `flux getattr hostlist`.
Result<Detected> detect_flux(const util::Env& env);
/// SkyPilot (found by SKYPILOT_NODE_RANK): nodes from SKYPILOT_NODE_IPS, head node first; run id
/// and ports from SKYPILOT_TASK_ID when set.
Result<Detected> detect_skypilot(const util::Env& env);
/// Open MPI (OMPI_COMM_WORLD_*) or MPICH/Hydra/Intel MPI (PMI_*, MPI_LOCAL*).
Result<Detected> detect_mpi(const util::Env& env);

/// Slurm's SLURM_JOB_ID and SLURM_SUBMIT_DIR when both are set, else PBS's PBS_JOBID and
/// PBS_O_WORKDIR, else nullopt. Independent of which scheduler detect() picks.
std::optional<Job> detect_job(const util::Env& env);

/// Runs the detectors in precedence order and returns the first present one (or an empty
/// Detected), then applies the cross-checks: refuses a double launch (several ddprun tasks on
/// this node while more than one worker each is wanted), refuses a SkyPilot node rank that the
/// MPI rank of a one-task-per-node mpiexec contradicts, and fills `job`. Errors are
/// ErrorCode::config, one line, naming the variable.
Result<Detected> detect(const util::Env& env, const HostInputs& host);

/// The detected values as "name = text (origin)" lines, in a fixed order.
std::string render_detected(const Detected& detected);

}  // namespace ddprun::sched
