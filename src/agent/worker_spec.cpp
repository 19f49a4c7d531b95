#include "ddprun/agent/worker_spec.hpp"

#include "ddprun/util/strings.hpp"

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

std::vector<std::string> worker_argv(const config::WorkerCommand& cfg, int local_rank) {
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

std::string entrypoint_name(const config::WorkerCommand& cfg) { return cfg.training_script; }

std::vector<int> placement_cpus(const config::HostPlan& cfg, int local_rank) {
  const auto idx = static_cast<std::size_t>(local_rank);
  if (local_rank < 0 || idx >= cfg.placements.size()) {
    return {};
  }
  return cfg.placements[idx].cpus;
}

}  // namespace ddprun::agent
