#pragma once
// Pure description of the workers one agent starts: their command line, their environment
// and the ranks they get. No I/O here.

#include "ddprun/config/launch_config.hpp"
#include "ddprun/util/env.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ddprun::agent {

/// Ranks of one worker (spec §3).
struct WorkerRanks {
  int local_rank = 0;
  int rank = 0;
  int group_rank = 0;
  int role_rank = 0;
  int local_world_size = 1;
  int world_size = 1;
  int group_world_size = 1;
  int role_world_size = 1;
};

/// Values shared by every worker of one round.
struct RoundInfo {
  std::string master_addr;
  int master_port = 0;
  int restart_count = 0;
  int max_restarts = 0;
  std::string run_id;
  bool use_agent_store = false;
  std::string role;
};

/// One node's place in a round: where its workers' global and role ranks start, and the sizes.
struct NodePlace {
  int group_rank = 0;
  int group_world_size = 1;
  int local_world_size = 1;
  int worker_base = 0;
  int world_size = 1;
  int role_base = 0;
  int role_world_size = 1;
};

/// The ranks of the workers of the node at `place` (local ranks 0..local_world_size-1). The
/// place's prefix sums over group ranks (spec §3.2) come from the rendezvous (rdzv::plan_close),
/// or are the whole world for a single node.
std::vector<WorkerRanks> worker_ranks(const NodePlace& place);

/// The worker's argv (spec §1.3): interpreter, -u, -m, script, legacy flag, args; every
/// argument after the program passes through ${local_rank} substitution.
std::vector<std::string> worker_argv(const config::LaunchConfig& cfg, int local_rank);

/// Name used in the failure title: the script/module for Python workers, else the command.
std::string entrypoint_name(const config::LaunchConfig& cfg);

/// The agent's environment overlaid with torchrun's per-worker variables (spec §2.1).
/// `error_file` is empty when log files are disabled; `nccl` names the async-error-handling
/// variable(s) set (to the launcher's value of that variable, else 1).
util::Env worker_env(const util::Env& agent_env, const RoundInfo& round, const WorkerRanks& ranks,
                     const std::string& error_file,
                     config::NcclNames nccl = config::NcclNames::both);

/// Adds OMP_NUM_THREADS=1 to the agent environment when torchrun would (spec §1.5);
/// returns true when it did, so the caller prints the banner.
bool apply_omp_default(util::Env& agent_env, int nproc_per_node);

/// torchrun's OMP banner text (three lines, no trailing newline).
std::string omp_banner();

/// What to do with OMP_NUM_THREADS and what to print about it.
struct OmpDecision {
  enum class Log { info, warning, banner };
  std::optional<std::string> value;  ///< set this in the agent's environment; nullopt: leave it
  Log log = Log::info;
  std::string message;  ///< the line to log; omp_banner() for Log::banner
};

/// A value in the agent's environment is never overridden (§1.5). Otherwise torchrun mode sets
/// 1 when nproc > 1 (with the banner), cpus mode sets max(1, cpu_count / nproc), fixed mode
/// sets `fixed`. Every case says what was chosen.
OmpDecision decide_omp_threads(const util::Env& agent_env, config::OmpMode mode, int fixed,
                               int nproc_per_node, int cpu_count);

/// Applies local rank `local_rank`'s placement: sets CUDA_VISIBLE_DEVICES in `env` when
/// --pin-gpus or --virtual-local-rank gave the worker one, LOCAL_RANK=0 under
/// --virtual-local-rank, and returns its CPUs (empty: inherit the agent's mask).
std::vector<int> apply_placement(const config::LaunchConfig& cfg, int local_rank, util::Env& env);

}  // namespace ddprun::agent
