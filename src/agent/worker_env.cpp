#include "ddprun/agent/worker_env.hpp"

#include "ddprun/agent/file_timer.hpp"

#include <algorithm>

namespace ddprun::agent {

namespace {

std::string omp_user_kept(const std::string& value, config::OmpMode mode) {
  std::string line = "OMP_NUM_THREADS=" + value + " from the environment is passed to the workers";
  return mode == config::OmpMode::torchrun ? line + " unchanged"
                                           : line + "; --omp-threads is ignored";
}

std::vector<std::string_view> nccl_names(config::NcclNames names) {
  switch (names) {
    case config::NcclNames::current:
      return {k_nccl_async_env};
    case config::NcclNames::legacy:
      return {k_nccl_async_legacy_env};
    case config::NcclNames::both:
      break;
  }
  return {k_nccl_async_env, k_nccl_async_legacy_env};
}

/// Sets `name` unless the agent's environment (copied into `env`) already does.
void set_default(util::Env& env, std::string_view name, std::string value) {
  if (!env.has(name)) {
    env.set(std::string(name), std::move(value));
  }
}

void set_plan_defaults(util::Env& env, const WorkerEnvPlan& plan) {
  if (plan.omp_num_threads) {
    set_default(env, k_omp_num_threads_env, *plan.omp_num_threads);
  }
  if (plan.faulthandler) {
    set_default(env, k_faulthandler_env, "1");
  }
  if (plan.unbuffered) {
    set_default(env, k_unbuffered_env, "1");
  }
  for (auto name : nccl_names(plan.nccl)) {
    set_default(env, name, "1");
  }
}

void set_torchrun_vars(util::Env& env, const RoundInfo& round, const WorkerRanks& r) {
  auto set_int = [&env](const char* name, int v) { env.set(name, std::to_string(v)); };
  set_int("LOCAL_RANK", r.local_rank);
  set_int("RANK", r.rank);
  set_int("GROUP_RANK", r.group_rank);
  set_int("ROLE_RANK", r.role_rank);
  env.set("ROLE_NAME", round.role);
  set_int("LOCAL_WORLD_SIZE", r.local_world_size);
  set_int("WORLD_SIZE", r.world_size);
  set_int("GROUP_WORLD_SIZE", r.group_world_size);
  set_int("ROLE_WORLD_SIZE", r.role_world_size);
  env.set("MASTER_ADDR", round.master_addr);
  set_int("MASTER_PORT", round.master_port);
  set_int("TORCHELASTIC_RESTART_COUNT", round.restart_count);
  set_int("TORCHELASTIC_MAX_RESTARTS", round.max_restarts);
  env.set("TORCHELASTIC_RUN_ID", round.run_id);
  env.set("TORCHELASTIC_USE_AGENT_STORE", round.use_agent_store ? "True" : "False");
}

void set_placement(util::Env& env, const WorkerEnvPlan& plan, int local_rank) {
  const auto idx = static_cast<std::size_t>(local_rank);
  if (local_rank < 0 || idx >= plan.placements.size()) {
    return;
  }
  const auto& place = plan.placements[idx];
  if (place.cuda_visible_devices) {
    env.set("CUDA_VISIBLE_DEVICES", *place.cuda_visible_devices);
  }
  if (place.local_rank) {
    env.set("LOCAL_RANK", std::to_string(*place.local_rank));
  }
}

}  // namespace

std::span<const cli::VariableDoc> worker_variables() {
  static constexpr cli::VariableDoc k_variables[] = {
      {k_omp_num_threads_env,
       "1 when unset and more than one worker runs per node, as torchrun; --omp-threads "
       "chooses another rule."},
      {k_faulthandler_env,
       "1 when unset and stacks may be taken (--stacks-on-failure, --stall-timeout, the file "
       "timer) from Python workers."},
      {k_unbuffered_env, "1 when unset with --stall-timeout and Python workers."},
      {k_nccl_async_env, "1 when unset, for torch 2.2 and newer (and a torch ddprun cannot find)."},
      {k_nccl_async_legacy_env,
       "1 when unset, for torch older than 2.2 (and a torch ddprun cannot find)."},
      {"LOCAL_RANK", "The worker's rank on this node (0 with --virtual-local-rank)."},
      {"RANK", "The worker's rank in the job."},
      {"GROUP_RANK", "This node's rank in the round."},
      {"ROLE_RANK", "The worker's rank among the workers of its role."},
      {"ROLE_NAME", "The --role (default: default)."},
      {"LOCAL_WORLD_SIZE", "The workers on this node."},
      {"WORLD_SIZE", "The workers in the job."},
      {"GROUP_WORLD_SIZE", "The nodes in the round."},
      {"ROLE_WORLD_SIZE", "The workers of the role in the job."},
      {"MASTER_ADDR", "Where the workers' store listens (torch.distributed's env:// init)."},
      {"MASTER_PORT", "Its port."},
      {"TORCHELASTIC_RESTART_COUNT", "The failed attempts before this one."},
      {"TORCHELASTIC_MAX_RESTARTS", "The --max-restarts."},
      {"TORCHELASTIC_RUN_ID", "The --rdzv-id."},
      {"TORCHELASTIC_USE_AGENT_STORE",
       "True when the workers use the agent's store, else False (then worker rank 0 hosts it)."},
      {k_signals_to_handle_env,
       "The --signals-to-handle text, for torch 2.9 and newer, whose torchrun sets it."},
      {"TORCHELASTIC_ERROR_FILE", "Where the worker's @record writes its exception (JSON)."},
      {k_timer_file_env, "The file-timer watchdog's FIFO, with TORCHELASTIC_ENABLE_FILE_TIMER=1."},
      {"CUDA_VISIBLE_DEVICES", "The worker's own GPUs, with --pin-gpus or --virtual-local-rank."},
  };
  return k_variables;
}

std::string omp_banner() {
  std::string stars(41, '*');
  return stars + "\n" +
         "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to "
         "avoid your system being overloaded, please further tune the variable for optimal "
         "performance in your application as needed. \n" +
         stars;
}

OmpDecision decide_omp_threads(const util::Env& agent_env, config::OmpMode mode, int fixed,
                               int nproc_per_node, int cpu_count) {
  using Log = OmpDecision::Log;
  if (auto user = agent_env.get(k_omp_num_threads_env)) {
    return {std::nullopt, mode == config::OmpMode::torchrun ? Log::info : Log::warning,
            omp_user_kept(*user, mode)};
  }
  if (mode == config::OmpMode::fixed) {
    const auto n = std::to_string(fixed);
    return {n, Log::warning,
            "Setting OMP_NUM_THREADS=" + n + " for each worker (--omp-threads " + n + ")"};
  }
  if (mode == config::OmpMode::cpus) {
    const int per = std::max(1, cpu_count / std::max(1, nproc_per_node));
    return {std::to_string(per), Log::warning,
            "Setting OMP_NUM_THREADS=" + std::to_string(per) +
                " for each worker (--omp-threads "
                "cpus: " +
                std::to_string(cpu_count) + " CPU(s) in the affinity mask / " +
                std::to_string(nproc_per_node) + " worker(s))"};
  }
  if (nproc_per_node > 1) {
    return {"1", Log::banner, omp_banner()};
  }
  return {std::nullopt, Log::info, "OMP_NUM_THREADS left unset (one worker, as torchrun)"};
}

bool takes_faulthandler_dumps(const config::WorkerCommand& command,
                              const config::SupervisorOptions& options, const util::Env& env) {
  const bool file_timer = env.get(std::string(k_enable_file_timer_env)).value_or("") == "1";
  return !command.no_python &&
         (options.stacks_on_failure || options.stall_timeout.count() > 0 || file_timer);
}

WorkerEnvPlan make_worker_env_plan(const config::WorkerCommand& command,
                                   const config::SupervisorOptions& options,
                                   const config::HostPlan& host, const util::Env& env,
                                   std::optional<std::string> omp_num_threads) {
  WorkerEnvPlan plan;
  plan.omp_num_threads = std::move(omp_num_threads);
  plan.faulthandler = takes_faulthandler_dumps(command, options, env);
  // Block-buffered output would look like a stall.
  plan.unbuffered = options.stall_timeout.count() > 0 && !command.no_python;
  plan.nccl = host.torchrun.nccl_names;
  if (host.torchrun.signals_env) {
    plan.signals_to_handle = options.signals_to_handle_text;
  }
  for (const auto& place : host.placements) {
    plan.placements.push_back({place.cuda_visible_devices, place.local_rank_env});
  }
  return plan;
}

util::Env worker_env(const util::Env& agent_env, const WorkerEnvPlan& plan, const RoundInfo& round,
                     const WorkerRanks& ranks, const WorkerFiles& files) {
  util::Env env = agent_env;
  set_plan_defaults(env, plan);
  set_torchrun_vars(env, round, ranks);
  if (plan.signals_to_handle) {
    env.set(std::string(k_signals_to_handle_env), *plan.signals_to_handle);
  }
  env.set("TORCHELASTIC_ERROR_FILE", files.error_file);
  if (!files.timer_file.empty()) {
    env.set(std::string(k_timer_file_env), files.timer_file);
  }
  set_placement(env, plan, ranks.local_rank);
  return env;
}

}  // namespace ddprun::agent
