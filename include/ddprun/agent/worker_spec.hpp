#pragma once
// Pure description of the workers one agent starts: their command line, the ranks they get
// and their CPUs (their environment: worker_env.hpp). No I/O here.

#include "ddprun/config/launch_config.hpp"

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
std::vector<std::string> worker_argv(const config::WorkerCommand& cfg, int local_rank);

/// Name used in the failure title: the script/module for Python workers, else the command.
std::string entrypoint_name(const config::WorkerCommand& cfg);

/// Local rank `local_rank`'s CPUs (--numa-binding); empty: inherit the agent's mask. Its
/// environment part is in worker_env.hpp.
std::vector<int> placement_cpus(const config::HostPlan& cfg, int local_rank);

}  // namespace ddprun::agent
