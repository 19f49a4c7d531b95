#include "ddprun/agent/worker_spec.hpp"

#include "ddprun/util/strings.hpp"

#include <algorithm>

namespace ddprun::agent {

std::vector<WorkerRanks> worker_ranks(const NodePlace& p) {
  std::vector<WorkerRanks> out;
  out.reserve(static_cast<std::size_t>(p.local_world_size));
  for (int lr = 0; lr < p.local_world_size; ++lr) {
    out.push_back(WorkerRanks{lr, p.worker_base + lr, p.group_rank, p.role_base + lr,
                              p.local_world_size, p.world_size, p.group_world_size,
                              p.role_world_size});
  }
  return out;
}

std::vector<std::string> worker_argv(const config::LaunchConfig& cfg, int local_rank) {
  std::vector<std::string> argv;
  if (!cfg.no_python || cfg.run_path) {
    argv = {cfg.python, "-u"};
    if (cfg.module) {
      argv.emplace_back("-m");
    }
  }
  argv.push_back(cfg.training_script);
  if (cfg.append_local_rank) {
    argv.push_back(cfg.local_rank_flag + "=" + std::to_string(local_rank));
  }
  argv.insert(argv.end(), cfg.training_script_args.begin(), cfg.training_script_args.end());
  auto lr = std::to_string(local_rank);
  for (std::size_t i = 1; i < argv.size(); ++i) {
    argv[i] = util::substitute_var(argv[i], "local_rank", lr);
  }
  return argv;
}

std::string entrypoint_name(const config::LaunchConfig& cfg) { return cfg.training_script; }

std::vector<const char*> nccl_names(config::NcclNames names) {
  constexpr const char* k_current = "TORCH_NCCL_ASYNC_ERROR_HANDLING";
  constexpr const char* k_legacy = "NCCL_ASYNC_ERROR_HANDLING";
  switch (names) {
    case config::NcclNames::current:
      return {k_current};
    case config::NcclNames::legacy:
      return {k_legacy};
    case config::NcclNames::both:
      break;
  }
  return {k_current, k_legacy};
}

util::Env worker_env(const util::Env& agent_env, const RoundInfo& round, const WorkerRanks& r,
                     const std::string& error_file, config::NcclNames nccl) {
  util::Env env = agent_env;
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
  for (const char* name : nccl_names(nccl)) {
    env.set(name, agent_env.get(name).value_or("1"));
  }
  env.set("TORCHELASTIC_ERROR_FILE", error_file);
  return env;
}

bool apply_omp_default(util::Env& agent_env, int nproc_per_node) {
  if (agent_env.has("OMP_NUM_THREADS") || nproc_per_node <= 1) {
    return false;
  }
  agent_env.set("OMP_NUM_THREADS", "1");
  return true;
}

std::string omp_banner() {
  std::string stars(41, '*');
  return stars + "\n" +
         "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to "
         "avoid your system being overloaded, please further tune the variable for optimal "
         "performance in your application as needed. \n" +
         stars;
}

namespace {

std::string omp_user_kept(const std::string& value, config::OmpMode mode) {
  std::string line = "OMP_NUM_THREADS=" + value + " from the environment is passed to the workers";
  return mode == config::OmpMode::torchrun ? line + " unchanged"
                                           : line + "; --omp-threads is ignored";
}

}  // namespace

OmpDecision decide_omp_threads(const util::Env& agent_env, config::OmpMode mode, int fixed,
                               int nproc_per_node, int cpu_count) {
  using Log = OmpDecision::Log;
  if (auto user = agent_env.get("OMP_NUM_THREADS")) {
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

std::vector<int> apply_placement(const config::LaunchConfig& cfg, int local_rank, util::Env& env) {
  const auto idx = static_cast<std::size_t>(local_rank);
  if (local_rank < 0 || idx >= cfg.placements.size()) {
    return {};
  }
  const auto& place = cfg.placements[idx];
  if (place.cuda_visible_devices) {
    env.set("CUDA_VISIBLE_DEVICES", *place.cuda_visible_devices);
  }
  if (place.local_rank_env) {
    env.set("LOCAL_RANK", std::to_string(*place.local_rank_env));
  }
  return place.cpus;
}

}  // namespace ddprun::agent
