#include "ddprun/agent/worker_spec.hpp"

#include <algorithm>

#include "ddprun/util/strings.hpp"

namespace ddprun::agent {

std::vector<WorkerRanks> assign_ranks(const std::vector<NodeInfo>& nodes, int group_rank) {
  auto sorted = nodes;
  std::sort(sorted.begin(), sorted.end(),
            [](const NodeInfo& a, const NodeInfo& b) { return a.group_rank < b.group_rank; });
  int base = 0;
  int world = 0;
  int role_base = 0;
  int role_world = 0;
  const NodeInfo* self = nullptr;
  for (const auto& n : sorted) {
    if (n.group_rank == group_rank) {
      self = &n;
    }
  }
  if (self == nullptr) {
    return {};
  }
  for (const auto& n : sorted) {
    world += n.local_world_size;
    base += n.group_rank < group_rank ? n.local_world_size : 0;
    if (n.role == self->role) {
      role_world += n.local_world_size;
      role_base += n.group_rank < group_rank ? n.local_world_size : 0;
    }
  }
  std::vector<WorkerRanks> out;
  for (int lr = 0; lr < self->local_world_size; ++lr) {
    out.push_back(WorkerRanks{lr, base + lr, group_rank, role_base + lr, self->local_world_size,
                              world, static_cast<int>(sorted.size()), role_world});
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

util::Env worker_env(const util::Env& agent_env, const RoundInfo& round, const WorkerRanks& r,
                     const std::string& error_file) {
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
  for (const char* nccl : {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "NCCL_ASYNC_ERROR_HANDLING"}) {
    env.set(nccl, agent_env.get(nccl).value_or("1"));
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

}  // namespace ddprun::agent
