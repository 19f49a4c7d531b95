// ddprun's own options, plus --use-env from the legacy torch.distributed.launch parser.
// Only --stall-timeout (PET_STALL_TIMEOUT, as the issue that asked for it named it), --segment
// (PET_SEGMENT, likewise) and the node health checks read PET_; the others are not torchrun's.
// --log-level and
// --shutdown-timeout fall back on the environment variables torch itself reads for the same
// knobs.
#include "flag_groups.hpp"

namespace ddprun::cli::detail {

namespace {

std::vector<FlagSpec> command_extras() {
  const auto g = FlagGroup::extras;
  return {
      {.dest = flag::k_python,
       .spellings = {"--python"},
       .kind = FlagKind::valued,
       .metavar = "PATH",
       .group = g,
       .help = "Interpreter for the workers; empty means $PYTHON_EXEC, else the python3 in "
               "ddprun's own directory (a venv's bin/ after pip install, /usr/bin for the .deb), "
               "else python3 on PATH."},
      {.dest = flag::k_use_env,
       .spellings = {"--use-env", "--use_env"},
       .kind = FlagKind::boolean,
       .default_value = "0",
       .group = g,
       .help = "Legacy torch.distributed.launch flag: accepted for symmetry; LOCAL_RANK is always "
               "set in the environment."},
      {.dest = flag::k_legacy_local_rank,
       .spellings = {"--legacy-local-rank", "--legacy_local_rank"},
       .kind = FlagKind::boolean,
       .default_value = "0",
       .group = g,
       .help = "Append --local_rank=N after the script, like torch.distributed.launch without "
               "--use-env."},
      {.dest = flag::k_local_rank_arg,
       .spellings = {"--local-rank-arg", "--local_rank_arg"},
       .kind = FlagKind::valued,
       .default_value = "underscore",
       .metavar = "STYLE",
       .choices = {"underscore", "dash"},
       .group = g,
       .help = "Spelling of the legacy argument: underscore gives --local_rank=N, dash gives "
               "--local-rank=N."},
  };
}

std::vector<FlagSpec> agent_extras() {
  const auto g = FlagGroup::extras;
  return {
      {.dest = flag::k_agent_store,
       .spellings = {"--agent-store", "--agent_store"},
       .kind = FlagKind::valued,
       .default_value = "auto",
       .metavar = "MODE",
       .choices = {"auto", "on", "off"},
       .group = g,
       .help = "Whether the launcher hosts the workers' TCPStore: auto follows torchrun, on forces "
               "it, off means 1.13 behaviour (worker rank 0 hosts the store for c10d)."},
      {.dest = flag::k_shutdown_timeout,
       .spellings = {"--shutdown-timeout", "--shutdown_timeout"},
       .kind = FlagKind::valued,
       .default_value = "30",
       .env_var = "TORCH_ELASTIC_SHUTDOWN_TIMEOUT",
       .metavar = "SECONDS",
       .group = g,
       .help = "Grace period between SIGTERM and SIGKILL when stopping workers."},
      {.dest = flag::k_events_file,
       .spellings = {"--events-file", "--events_file"},
       .kind = FlagKind::valued,
       .metavar = "PATH",
       .group = g,
       .help = "Append the launcher's events as JSON lines to this file."},
      {.dest = flag::k_metrics_port,
       .spellings = {"--metrics-port", "--metrics_port"},
       .kind = FlagKind::valued,
       .env_var = "DDPRUN_METRICS_PORT",
       .metavar = "PORT",
       .group = g,
       .help = "Serve Prometheus metrics at GET /metrics on this port (0: a free one, logged at "
               "INFO), without the health endpoint's semantics; TORCHELASTIC_HEALTH_CHECK_PORT's "
               "server has /metrics too."},
      {.dest = flag::k_line_output,
       .spellings = {"--line-output", "--line_output"},
       .kind = FlagKind::valued,
       .default_value = "auto",
       .env_var = "DDPRUN_LINE_OUTPUT",
       .metavar = "MODE",
       .choices = {"auto", "on", "off"},
       .group = g,
       .help = "Workers' lines written whole through the launcher, never split or merged with "
               "another rank's: auto does it for each of ddprun's stdout and stderr that is not "
               "a terminal (a file, a pipe, a Slurm output file), on always, off never (the "
               "workers write to ddprun's streams themselves, as under torchrun)."},
      {.dest = flag::k_stacks_on_failure,
       .spellings = {"--stacks-on-failure", "--stacks_on_failure"},
       .kind = FlagKind::boolean,
       .default_value = "0",
       .group = g,
       .help = "When a worker fails while others still run, capture the stacks of the running "
               "ones before stopping them (py-spy, faulthandler, gdb or eu-stack, else /proc): "
               "a grouped report on stderr, the full stacks in attempt_<n>/<rank>/stacks.txt."},
      {.dest = flag::k_stall_timeout,
       .spellings = {"--stall-timeout", "--stall_timeout"},
       .kind = FlagKind::valued,
       .default_value = "0",
       .env_var = "PET_STALL_TIMEOUT",
       .metavar = "TIMEOUT",
       .group = g,
       .help = "Treat the worker group as hung when for this long no worker wrote any output "
               "and no file-timer request arrived: take every rank's stack, then stop and restart "
               "the group (within --max-restarts). 0 (the default) turns it off. auto or "
               "auto:FACTOR learns it: FACTOR (default 5) times the longest silent gap seen "
               "after the first progress (the maximum over the job's nodes, kept across "
               "restarts), at least --stall-timeout-floor; --stall-startup-timeout applies "
               "until then."},
      {.dest = flag::k_stall_startup_timeout,
       .spellings = {"--stall-startup-timeout", "--stall_startup_timeout"},
       .kind = FlagKind::valued,
       .default_value = "1800",
       .metavar = "SECONDS",
       .group = g,
       .help = "With --stall-timeout auto: the timeout while ddprun learns, from the group's "
               "start until it has made progress for this long (and at least FACTOR times the "
               "longest start-up seen, before each round's first progress)."},
      {.dest = flag::k_stall_timeout_floor,
       .spellings = {"--stall-timeout-floor", "--stall_timeout_floor"},
       .kind = FlagKind::valued,
       .default_value = "60",
       .metavar = "SECONDS",
       .group = g,
       .help = "With --stall-timeout auto: the learned timeout is never below this."},
      {.dest = flag::k_log_level,
       .spellings = {"--log-level", "--log_level"},
       .kind = FlagKind::valued,
       .default_value = "WARNING",
       .env_var = "LOGLEVEL",
       .metavar = "LEVEL",
       .group = g,
       .help = "Level of the launcher's own messages: DEBUG, INFO, WARNING, ERROR or CRITICAL."},
  };
}

/// Node health checks before each round (docs/reliability.md, "Node health checks"). Each reads
/// its PET_ variable, so a job script can set them for every node at once.
std::vector<FlagSpec> health_extras() {
  const auto g = FlagGroup::extras;
  return {
      {.dest = flag::k_health_check,
       .spellings = {"--health-check", "--health_check"},
       .kind = FlagKind::valued,
       .env_var = "PET_HEALTH_CHECK",
       .metavar = "CMD",
       .group = g,
       .help = "Run this shell command (/bin/sh -c) before the node joins each round; a non-zero "
               "exit or --health-check-timeout makes the node unhealthy: it does not join, it "
               "withdraws and exits with status 3, its last output lines as the reason. Empty "
               "(the default) runs nothing."},
      {.dest = flag::k_health_check_timeout,
       .spellings = {"--health-check-timeout", "--health_check_timeout"},
       .kind = FlagKind::valued,
       .default_value = "60",
       .env_var = "PET_HEALTH_CHECK_TIMEOUT",
       .metavar = "SECONDS",
       .group = g,
       .help = "How long --health-check may run; then its whole process group is killed and the "
               "node is unhealthy."},
      {.dest = flag::k_health_check_interval,
       .spellings = {"--health-check-interval", "--health_check_interval"},
       .kind = FlagKind::valued,
       .default_value = "0",
       .env_var = "PET_HEALTH_CHECK_INTERVAL",
       .metavar = "SECONDS",
       .group = g,
       .help = "Also run --health-check every SECONDS while the workers run; a failing check is "
               "the group's failure (its root cause), and the node then withdraws with status 3. "
               "0 (the default) checks before rounds only."},
      {.dest = flag::k_gpu_memory_wait,
       .spellings = {"--gpu-memory-wait", "--gpu_memory_wait"},
       .kind = FlagKind::valued,
       .default_value = "50",
       .env_var = "PET_GPU_MEMORY_WAIT",
       .metavar = "SECONDS",
       .group = g,
       .help = "After a worker group stops, wait up to this long for the used memory of each GPU "
               "the workers use (NVML) to fall under --gpu-memory-tolerance before joining the "
               "next round; a GPU that stays above makes the node unhealthy (status 3). 0 turns "
               "it off; no NVML, no wait."},
      {.dest = flag::k_gpu_memory_tolerance,
       .spellings = {"--gpu-memory-tolerance", "--gpu_memory_tolerance"},
       .kind = FlagKind::valued,
       .default_value = "512",
       .env_var = "PET_GPU_MEMORY_TOLERANCE",
       .metavar = "MIB",
       .group = g,
       .help = "Used memory (MiB) under which a GPU counts as freed by the stopped workers."},
  };
}

std::vector<FlagSpec> placement_extras() {
  const auto g = FlagGroup::extras;
  return {
      {.dest = flag::k_omp_threads,
       .spellings = {"--omp-threads", "--omp_threads"},
       .kind = FlagKind::valued,
       .default_value = "torchrun",
       .metavar = "MODE",
       .group = g,
       .help = "OMP_NUM_THREADS for the workers when the environment does not set it: torchrun "
               "(1 when several workers), cpus (CPUs in the affinity mask / workers) or a "
               "number."},
      {.dest = flag::k_pin_gpus,
       .spellings = {"--pin-gpus", "--pin_gpus"},
       .kind = FlagKind::boolean,
       .default_value = "0",
       .group = g,
       .help = "Give each worker CUDA_VISIBLE_DEVICES=<its local_rank-th GPU>, so it sees one "
               "device (cuda:0); LOCAL_RANK is unchanged."},
  };
}

std::vector<FlagSpec> info_extras() {
  const auto g = FlagGroup::extras;
  return {
      {.dest = flag::k_no_auto,
       .spellings = {"--no-auto", "--no_auto"},
       .kind = FlagKind::boolean,
       .default_value = "0",
       .group = g,
       .help = "Do not configure anything from Slurm, PBS, LSF, Flux or MPI variables."},
      {.dest = flag::k_launcher,
       .spellings = {"--launcher"},
       .kind = FlagKind::valued,
       .default_value = "auto",
       .metavar = "HOW",
       .choices = {"auto", "pbsdsh", "srun", "ssh", "none"},
       .group = g,
       .help = "Run once in a multi-node PBS or Slurm job script and start ddprun on every node "
               "through pbsdsh, srun or ssh; auto picks pbsdsh under PBS and srun under Slurm, "
               "none never fans out."},
      {.dest = flag::k_print_config,
       .spellings = {"--print-config", "--print_config"},
       .kind = FlagKind::boolean,
       .default_value = "0",
       .group = g,
       .help = "Print the resolved configuration, with where each value came from, and exit."},
      {.dest = flag::k_version,
       .spellings = {"--version"},
       .kind = FlagKind::version,
       .group = g,
       .help = "Print ddprun's version and exit."},
      {.dest = flag::k_help,
       .spellings = {"-h", "--help"},
       .kind = FlagKind::help,
       .group = g,
       .help = "Show this help message and exit."},
  };
}

/// Stopping a restart loop that cannot help (rdzv/crash_loop.hpp).
std::vector<FlagSpec> recovery_extras() {
  const auto g = FlagGroup::extras;
  return {
      {.dest = flag::k_crash_loop_limit,
       .spellings = {"--crash-loop-limit", "--crash_loop_limit"},
       .kind = FlagKind::valued,
       .default_value = "0",
       .metavar = "K",
       .group = g,
       .help = "Stop the job, exit status 3 (do not requeue), once K attempts in a row failed "
               "the same way (the same root-cause rank, exit code or signal and last stderr "
               "line) each within --crash-loop-window of its start, instead of spending the "
               "rest of --max-restarts. Decided once for the whole job. Off (0) by default, as "
               "torchrun spends every restart and a job may get through after a few such "
               "failures; while off, a streak of 3 is named in the restart lines and the final "
               "summary with the time the stop would have saved."},
      {.dest = flag::k_crash_loop_window,
       .spellings = {"--crash-loop-window", "--crash_loop_window"},
       .kind = FlagKind::valued,
       .default_value = "300",
       .metavar = "SECONDS",
       .group = g,
       .help = "An attempt that fails within this long of its start made no progress, so its "
               "failure counts towards --crash-loop-limit; a longer attempt ends the streak."},
      {.dest = flag::k_segment,
       .spellings = {"--segment"},
       .kind = FlagKind::valued,
       .default_value = "0",
       .env_var = "PET_SEGMENT",
       .metavar = "N",
       .group = g,
       .help = "Node ranks come in runs of N nodes of one NVLink domain (DDPRUN_NODE_DOMAIN, "
               "the GPUs' fabric, Slurm's block); nodes that make no whole run stand by as "
               "spares. The MIN and MAX of --nnodes must be multiples of N. 0: no segments "
               "(domains still get consecutive ranks)."},
  };
}

}  // namespace

std::vector<FlagSpec> ddprun_flags() {
  auto flags = command_extras();
  append(flags, recovery_extras());
  append(flags, agent_extras());
  append(flags, health_extras());
  append(flags, placement_extras());
  append(flags, info_extras());
  return flags;
}

}  // namespace ddprun::cli::detail
