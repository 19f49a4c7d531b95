// Nodes, workers and the worker command: torchrun's spellings, defaults and PET_ names.
#include "flag_groups.hpp"

namespace ddprun::cli::detail {

namespace {

std::vector<FlagSpec> node_flags() {
  const auto g = FlagGroup::nodes;
  return {
      {.dest = flag::k_nnodes,
       .spellings = {"--nnodes"},
       .kind = FlagKind::valued,
       .default_value = "1:1",
       .env_var = "PET_NNODES",
       .metavar = "MIN:MAX",
       .group = g,
       .help = "Number of nodes, or the range of nodes in form <minimum_nodes>:<maximum_nodes>."},
      {.dest = flag::k_nproc_per_node,
       .spellings = {"--nproc-per-node", "--nproc_per_node"},
       .kind = FlagKind::valued,
       .default_value = "1",
       .env_var = "PET_NPROC_PER_NODE",
       .metavar = "NPROC",
       .group = g,
       .help = "Number of workers per node: an integer, or cpu, gpu or auto."},
      {.dest = flag::k_node_rank,
       .spellings = {"--node-rank", "--node_rank"},
       .kind = FlagKind::valued,
       .default_value = "0",
       .env_var = "PET_NODE_RANK",
       .metavar = "RANK",
       .group = g,
       .help = "Rank of this node for multi-node training (static rendezvous only)."},
      {.dest = flag::k_numa_binding,
       .spellings = {"--numa-binding", "--numa_binding"},
       .kind = FlagKind::valued,
       .metavar = "MODE",
       .choices = {"node", "socket", "exclusive", "core-complex"},
       .group = g,
       .help = "Bind each worker to CPUs near its GPU (the local_rank-th visible GPU), within the "
               "inherited affinity mask: node, socket, exclusive (the node's cores split among "
               "its workers) or core-complex (one L3 domain each). Not read from PET_."},
  };
}

std::vector<FlagSpec> command_flags() {
  const auto g = FlagGroup::worker_command;
  return {
      {.dest = flag::k_role,
       .spellings = {"--role"},
       .kind = FlagKind::valued,
       .default_value = "default",
       .env_var = "PET_ROLE",
       .metavar = "ROLE",
       .group = g,
       .help = "User-defined role of the workers (ROLE_NAME, log prefixes)."},
      {.dest = flag::k_module,
       .spellings = {"-m", "--module"},
       .kind = FlagKind::boolean,
       .default_value = "0",
       .env_var = "PET_MODULE",
       .group = g,
       .help = "Interpret the training script as a Python module, like 'python -m'."},
      {.dest = flag::k_no_python,
       .spellings = {"--no-python", "--no_python"},
       .kind = FlagKind::boolean,
       .default_value = "0",
       .env_var = "PET_NO_PYTHON",
       .group = g,
       .help = "Execute the training script directly instead of through 'python -u'."},
      {.dest = flag::k_run_path,
       .spellings = {"--run-path", "--run_path"},
       .kind = FlagKind::boolean,
       .default_value = "0",
       .env_var = "PET_RUN_PATH",
       .group = g,
       .help =
           "Run the script with runpy.run_path in the worker (takes precedence over --no-python)."},
      {.dest = flag::k_start_method,
       .spellings = {"--start-method", "--start_method"},
       .kind = FlagKind::valued,
       .default_value = "spawn",
       .env_var = "PET_START_METHOD",
       .metavar = "METHOD",
       .choices = {"spawn", "fork", "forkserver"},
       .group = g,
       .help = "Multiprocessing start method for workers created with --run-path."},
      {.dest = flag::k_virtual_local_rank,
       .spellings = {"--virtual-local-rank", "--virtual_local_rank"},
       .kind = FlagKind::boolean,
       .default_value = "0",
       .env_var = "PET_VIRTUAL_LOCAL_RANK",
       .group = g,
       .help = "Give every worker LOCAL_RANK=0 and CUDA_VISIBLE_DEVICES naming only its own "
               "device (the local_rank-th inherited entry, else the local rank), as torch 2.10+."},
  };
}

}  // namespace

std::vector<FlagSpec> launch_flags() {
  auto flags = node_flags();
  append(flags, command_flags());
  return flags;
}

}  // namespace ddprun::cli::detail
