#pragma once
// A worker's environment, built in one place. Pure: no I/O here.
//
// Before anything starts, the launch decides what the agent adds for every worker
// (make_worker_env_plan: OMP_NUM_THREADS, the hang-detection variables, the NCCL
// async-error-handling names, each local rank's placement) and keeps it as a WorkerEnvPlan.
// At each spawn, worker_env() overlays that plan, the round and the worker's ranks and files on
// the agent's environment; nothing touches a worker's environment after it. Precedence, from
// lowest to highest:
//   1. what the plan adds for every worker, only where the agent's environment lacks the name
//      (a user's own OMP_NUM_THREADS, PYTHONFAULTHANDLER or NCCL variable passes unchanged);
//   2. the agent's environment;
//   3. torchrun's per-worker variables (RANK ... TORCHELASTIC_ERROR_FILE, spec §2.1), the
//      round's TORCHELASTIC_TIMER_FILE when the file-timer watchdog runs, and what torchrun
//      writes into its own environment for its workers to inherit (torch >= 2.9:
//      TORCHELASTIC_SIGNALS_TO_HANDLE, the --signals-to-handle text);
//   4. the worker's placement: CUDA_VISIBLE_DEVICES (--pin-gpus, --virtual-local-rank) and
//      LOCAL_RANK=0 (--virtual-local-rank).

#include "ddprun/agent/worker_spec.hpp"
#include "ddprun/cli/docs.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/util/env.hpp"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::agent {

inline constexpr std::string_view k_omp_num_threads_env = "OMP_NUM_THREADS";
inline constexpr std::string_view k_faulthandler_env = "PYTHONFAULTHANDLER";
inline constexpr std::string_view k_unbuffered_env = "PYTHONUNBUFFERED";
/// NCCL's async-error-handling variable as torch >= 2.2 reads it, and its older name.
inline constexpr std::string_view k_nccl_async_env = "TORCH_NCCL_ASYNC_ERROR_HANDLING";
inline constexpr std::string_view k_nccl_async_legacy_env = "NCCL_ASYNC_ERROR_HANDLING";
/// torchrun >= 2.9 writes --signals-to-handle here in its own environment (pytorch#160690).
inline constexpr std::string_view k_signals_to_handle_env = "TORCHELASTIC_SIGNALS_TO_HANDLE";

/// Every variable worker_env() may set, in the order it sets them, with what it holds and
/// when: the one list the man page prints (ddprun-docgen) and worker_env_test.cpp checks
/// against what worker_env() really sets.
std::span<const cli::VariableDoc> worker_variables();

/// torchrun's OMP banner text (three lines, no trailing newline).
std::string omp_banner();

/// What to do with OMP_NUM_THREADS and what to print about it.
struct OmpDecision {
  enum class Log { info, warning, banner };
  std::optional<std::string> value;  ///< give the workers this; nullopt: leave it
  Log log = Log::info;
  std::string message;  ///< the line to log; omp_banner() for Log::banner
};

/// A value in the agent's environment is never overridden (§1.5). Otherwise torchrun mode sets
/// 1 when nproc > 1 (with the banner), cpus mode sets max(1, cpu_count / nproc), fixed mode
/// sets `fixed`. Every case says what was chosen.
OmpDecision decide_omp_threads(const util::Env& agent_env, config::OmpMode mode, int fixed,
                               int nproc_per_node, int cpu_count);

/// Whether stacks may be taken during this launch (--stacks-on-failure, --stall-timeout, or
/// the file-timer watchdog) from Python workers' faulthandler dumps (stack_capture.hpp): they
/// then get PYTHONFAULTHANDLER=1 and the agent keeps their stderr's last lines (worker_io.cpp).
bool takes_faulthandler_dumps(const config::WorkerCommand& command,
                              const config::SupervisorOptions& options, const util::Env& env);

/// What one local rank's placement (host/placement.cpp) puts in its environment.
struct PlacementEnv {
  std::optional<std::string> cuda_visible_devices;  ///< the worker's own device list
  std::optional<int> local_rank;                    ///< --virtual-local-rank: 0
};

/// What the agent adds to its workers' environment, decided once before anything starts.
struct WorkerEnvPlan {
  std::optional<std::string> omp_num_threads{};  ///< OmpDecision::value
  bool faulthandler = false;  ///< PYTHONFAULTHANDLER=1 (takes_faulthandler_dumps)
  bool unbuffered = false;    ///< PYTHONUNBUFFERED=1 (--stall-timeout, Python workers)
  config::NcclNames nccl = config::NcclNames::both;  ///< the names set to 1
  /// TORCHELASTIC_SIGNALS_TO_HANDLE's value (torch >= 2.9); nullopt: not set by the agent.
  std::optional<std::string> signals_to_handle{};
  std::vector<PlacementEnv> placements{};  ///< by local rank; past the end: no placement
};

/// The plan for the workers `command` starts, watched as `options` says and placed as `host`
/// says, in the agent's environment `env`; `omp_num_threads` is decide_omp_threads' value.
WorkerEnvPlan make_worker_env_plan(const config::WorkerCommand& command,
                                   const config::SupervisorOptions& options,
                                   const config::HostPlan& host, const util::Env& env,
                                   std::optional<std::string> omp_num_threads);

/// The files a worker is told about.
struct WorkerFiles {
  std::string error_file;  ///< TORCHELASTIC_ERROR_FILE; "" when log files are off
  std::string timer_file;  ///< the round's file-timer FIFO; "": no watchdog, the agent's passes
};

/// Worker `ranks`' full environment in `round`: `agent_env` overlaid as the header says.
util::Env worker_env(const util::Env& agent_env, const WorkerEnvPlan& plan, const RoundInfo& round,
                     const WorkerRanks& ranks, const WorkerFiles& files);

}  // namespace ddprun::agent
