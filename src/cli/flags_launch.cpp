// Nodes, workers and the worker command: torchrun's spellings, defaults and PET_ names.
#include "flag_groups.hpp"

namespace ddprun::cli::detail {

namespace {

std::vector<FlagSpec> node_flags() {
  using enum FlagKind;
  const auto g = FlagGroup::nodes;
  return {
      {"nnodes", {"--nnodes"}, valued, "1:1", "PET_NNODES", "MIN:MAX", {}, g,
       "Number of nodes, or the range of nodes in form <minimum_nodes>:<maximum_nodes>."},
      {"nproc_per_node", {"--nproc-per-node", "--nproc_per_node"}, valued, "1",
       "PET_NPROC_PER_NODE", "NPROC", {}, g,
       "Number of workers per node: an integer, or cpu, gpu, xpu or auto."},
      {"node_rank", {"--node-rank", "--node_rank"}, valued, "0", "PET_NODE_RANK", "RANK", {}, g,
       "Rank of this node for multi-node training (static rendezvous only)."},
      {"numa_binding", {"--numa-binding", "--numa_binding"}, valued, "", "", "MODE",
       {"node", "socket", "exclusive", "core-complex"}, g,
       "Bind each worker to the CPUs near its GPU (local rank) with numactl. Not read from PET_."},
  };
}

std::vector<FlagSpec> command_flags() {
  using enum FlagKind;
  const auto g = FlagGroup::worker_command;
  return {
      {"role", {"--role"}, valued, "default", "PET_ROLE", "ROLE", {}, g,
       "User-defined role of the workers (ROLE_NAME, log prefixes)."},
      {"module", {"-m", "--module"}, boolean, "0", "PET_MODULE", "", {}, g,
       "Interpret the training script as a Python module, like 'python -m'."},
      {"no_python", {"--no-python", "--no_python"}, boolean, "0", "PET_NO_PYTHON", "", {}, g,
       "Execute the training script directly instead of through 'python -u'."},
      {"run_path", {"--run-path", "--run_path"}, boolean, "0", "PET_RUN_PATH", "", {}, g,
       "Run the script with runpy.run_path in the worker (takes precedence over --no-python)."},
      {"start_method", {"--start-method", "--start_method"}, valued, "spawn",
       "PET_START_METHOD", "METHOD", {"spawn", "fork", "forkserver"}, g,
       "Multiprocessing start method for workers created with --run-path."},
  };
}

}  // namespace

std::vector<FlagSpec> launch_flags() {
  auto flags = node_flags();
  append(flags, command_flags());
  return flags;
}

}  // namespace ddprun::cli::detail
