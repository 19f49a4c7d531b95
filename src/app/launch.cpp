// launch(): parse -> resolve -> preflight -> run the supervisor on one io_context -> status.

#include "launch.hpp"

#include "ddprun/agent/file_timer_server.hpp"
#include "ddprun/agent/health_server.hpp"
#include "ddprun/agent/metrics.hpp"
#include "ddprun/agent/metrics_hooks.hpp"
#include "ddprun/agent/reporting.hpp"
#include "ddprun/agent/supervisor.hpp"
#include "ddprun/agent/worker_env.hpp"
#include "ddprun/agent/worker_io.hpp"
#include "ddprun/backend/rendezvous_backend.hpp"
#include "ddprun/cli/args.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/config/rendezvous_policy.hpp"
#include "ddprun/host/cpus.hpp"
#include "ddprun/host/facts.hpp"
#include "ddprun/host/nvml.hpp"
#include "ddprun/host/placement.hpp"
#include "ddprun/host/torch_version.hpp"
#include "ddprun/process/posix_launcher.hpp"
#include "ddprun/util/exit_status.hpp"
#include "ddprun/util/fatal.hpp"
#include "ddprun/util/strings.hpp"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

#include "auto_config.hpp"
#include "fan_out.hpp"
#include "logging.hpp"
#include "version.hpp"

namespace ddprun::app {

namespace {

std::string version_text() {
  return std::string("ddprun ") + k_version + " (git " + k_git_revision + ", " + k_build_type +
         ", " + k_build_options + ")";
}

/// Spawning nothing is better than spawning workers that cannot start: check the program
/// (and the script, for Python workers) before anything runs.
Result<void> preflight(const config::LaunchConfig& cfg, const util::Env& env) {
  auto path = env.get("PATH").value_or("/usr/local/bin:/usr/bin:/bin");
  const std::string& program = cfg.command.no_python && !cfg.command.run_path
                                   ? cfg.command.training_script
                                   : cfg.command.python;
  auto resolved = process::resolve_executable(program, path);
  if (!resolved) {
    if (&program == &cfg.command.python) {
      return make_error(resolved.error().code,
                        config::source_of(cfg, "python") + ": " + resolved.error().message);
    }
    return resolved.error();
  }
  if (access(resolved->c_str(), X_OK) != 0) {
    return make_error(ErrorCode::io, "cannot execute " + util::quoted(*resolved) +
                                         ": Permission denied (errno 13)");
  }
  bool script_is_file = !(cfg.command.no_python && !cfg.command.run_path) && !cfg.command.module;
  if (script_is_file && access(cfg.command.training_script.c_str(), R_OK) != 0) {
    return make_error(ErrorCode::io, "training script " +
                                         util::quoted(cfg.command.training_script) +
                                         " cannot be read: " + std::strerror(errno));
  }
  return {};
}

/// Says where a word-valued --nproc-per-node came from, and warns when the workers will share
/// fewer CPUs than there are of them (with the final worker count, so only here).
void report_host_choices(const config::LaunchConfig& cfg, const config::HostFacts& facts,
                         const sched::Detected& detected) {
  if (!cfg.group.nproc_source.empty()) {
    spdlog::info("Using nproc_per_node={} ({})", cfg.group.nproc_per_node, cfg.group.nproc_source);
  }
  if (auto small = host::small_cpu_mask_warning(facts.cpu_count, cfg.group.nproc_per_node,
                                                detected.scheduler)) {
    spdlog::warn("{}", *small);
  }
  if (!cfg.rdzv.domain_origin.empty() && !config::is_single_node(cfg.rdzv)) {
    spdlog::info(
        "node domain {} ({}){}", cfg.rdzv.domain.empty() ? "-" : cfg.rdzv.domain,
        cfg.rdzv.domain_origin,
        cfg.rdzv.rdzv_settings.segment > 0
            ? "; node ranks in segments of " + std::to_string(cfg.rdzv.rdzv_settings.segment)
            : "");
  }
}

/// Decides the workers' OMP_NUM_THREADS and says what was chosen (torchrun's banner at WARNING).
std::optional<std::string> omp_threads_for(const config::LaunchConfig& cfg,
                                           const config::HostFacts& facts, const util::Env& env) {
  auto omp = agent::decide_omp_threads(env, cfg.resources.omp_mode, cfg.resources.omp_threads,
                                       cfg.group.nproc_per_node, facts.cpu_count);
  switch (omp.log) {
    case agent::OmpDecision::Log::banner:
      spdlog::warn("\n{}", omp.message);
      break;
    case agent::OmpDecision::Log::warning:
      spdlog::warn("{}", omp.message);
      break;
    case agent::OmpDecision::Log::info:
      spdlog::info("{}", omp.message);
      break;
  }
  return omp.value;
}

/// When this node's workers last made progress (Supervisor::last_progress) in wall-clock ms,
/// as `ddprun status` shows it; unknown when the agent has seen none.
std::function<std::optional<rdzv::WallMs>()> progress_source(const agent::Supervisor& supervisor,
                                                             const util::Clock& clock) {
  return [&supervisor, &clock]() -> std::optional<rdzv::WallMs> {
    const auto last = supervisor.last_progress();
    if (last == util::SteadyTime{}) {
      return std::nullopt;
    }
    const auto ago = std::chrono::duration_cast<std::chrono::milliseconds>(clock.now() - last);
    const auto wall =
        std::chrono::duration_cast<std::chrono::milliseconds>(clock.wall_now().time_since_epoch());
    return (wall - ago).count();
  };
}

/// With --stall-timeout auto: the supervisor's figures go to the round's other members, and
/// their maximum comes back (rdzv/stall_figures.hpp).
rdzv::StallShare stall_share(agent::Supervisor& supervisor) {
  return rdzv::StallShare{
      [&supervisor]() -> std::optional<rdzv::NodeStall> {
        auto figures = supervisor.stall_watch().figures();
        if (!figures) {
          return std::nullopt;
        }
        return rdzv::NodeStall{supervisor.stall_watch().timeout(), *figures};
      },
      [&supervisor](const rdzv::StallFigures& job) { supervisor.stall_watch().adopt(job); }};
}

/// The guardian kills the workers' groups (grandchildren included) if this agent is killed.
process::Guardian start_guardian() {
  auto guardian = process::Guardian::start();
  if (!guardian) {
    spdlog::warn("{}; workers' children may outlive a killed agent", guardian.error().message);
    return {};
  }
  return std::move(*guardian);
}

/// The guardian holds this agent's latest death notice (rdzv/death_notice.hpp) and acts on it
/// if the agent is killed; the others then re-form at once instead of after the keep-alive bound.
backend::NoticeSink guardian_sink(process::Guardian& guardian) {
  return [&guardian, warned = false](const std::optional<rdzv::DeathNotice>& n) mutable {
    if (!n) {
      guardian.clear_notice();
      return;
    }
    if (!guardian.notice(rdzv::encode_notice(*n)) && guardian.active() && !warned) {
      warned = true;
      spdlog::warn(
          "the guardian did not take this agent's death notice: if the agent is killed, "
          "the other nodes notice it only after the keep-alive bound");
    }
  };
}

/// What the workers' torchrun would give them (host/torch_version.hpp), said at INFO.
config::TorchrunFlavor torchrun_flavor_for(const config::LaunchConfig& cfg, const util::Env& env) {
  const auto torch = host::find_worker_torch(cfg.command.python, env);
  if (!torch) {
    const auto flavor = config::torchrun_flavor(std::nullopt);
    spdlog::info(
        "the workers' torch is not known (set DDPRUN_WORKER_TORCH=2.14, say): they get what "
        "the newest torchrun gives ({})",
        config::render_flavor(flavor));
    return flavor;
  }
  const auto flavor = config::torchrun_flavor(config::TorchRelease{torch->major, torch->minor});
  spdlog::info("the workers' torch is {}.{} ({}): they get what its torchrun gives ({})",
               torch->major, torch->minor, torch->where, config::render_flavor(flavor));
  return flavor;
}

/// --gpu-memory-wait's view of the workers' GPUs (NVML, opened after the first group stops);
/// null when the wait is off.
std::unique_ptr<host::GpuMemorySource> gpu_memory_for(const config::LaunchConfig& cfg,
                                                      const util::Env& env) {
  if (cfg.supervision.health.gpu_memory_wait.count() <= 0) {
    return nullptr;
  }
  std::vector<std::optional<std::string>> pinned;
  for (int lr = 0; lr < cfg.group.nproc_per_node; ++lr) {
    const auto i = static_cast<std::size_t>(lr);
    pinned.push_back(i < cfg.host.placements.size() ? cfg.host.placements[i].cuda_visible_devices
                                                    : std::nullopt);
  }
  return host::make_nvml_memory_source(std::move(pinned), env.get("CUDA_VISIBLE_DEVICES"));
}

/// The labels of every metric: the run, this host, the workers' role.
agent::MetricLabels metric_labels(const config::LaunchConfig& cfg) {
  return {cfg.rdzv.rdzv_id, host::host_name(), cfg.group.role};
}

agent::LiveFigures live_figures(agent::HealthSnapshot health, const agent::Rendezvous& rdzv) {
  const auto process = agent::read_process_figures();
  return {std::move(health), rdzv.standing_by(), process.cpu_seconds, process.resident_bytes,
          process.start_time_seconds};
}

int run_agent(const config::LaunchConfig& cfg, util::Env agent_env, agent::WorkerEnvPlan env_plan) {
  auto guardian = start_guardian();
  asio::io_context ctx(1);
  util::SystemClock clock;
  process::PosixLauncher launcher(&guardian);
  // What can still be a bad input (-r/-t, --log-dir, --events-file) is checked before any
  // store binds a port: a usage error must not depend on whether a port is free.
  auto io = agent::make_worker_io(ctx, cfg.output, cfg.group, cfg.rdzv, cfg.supervision,
                                  cfg.command, agent_env, clock);
  agent::Reporter reporter(cfg.command, cfg.output, agent_env, clock);
  agent::Metrics metrics(metric_labels(cfg), clock.now());
  metrics.stall_timeout(cfg.supervision.stall_timeout, cfg.supervision.stall_auto ? "startup"
                                                       : cfg.supervision.stall_timeout.count() > 0
                                                           ? "set"
                                                           : "off");
  auto backend = ddprun::backend::make_rendezvous(ctx, cfg, agent_env, clock);
  auto watchdog = agent::make_file_timer_server(ctx, clock, agent_env);
  auto stacks = agent::make_stack_capture(ctx, cfg.command, agent_env, *io);
  const auto health_port = agent_env.get(std::string(agent::k_health_port_env));
  auto gpu_memory = gpu_memory_for(cfg, agent_env);
  agent::Supervisor supervisor(
      ctx,
      agent::SupervisorPlan{cfg.group, cfg.supervision, cfg.command, cfg.host,
                            cfg.rdzv.rdzv_settings, std::move(agent_env), std::move(env_plan)},
      agent::SupervisorSeams{launcher, clock, backend->rendezvous(), *io, watchdog.get(),
                             stacks.get(), backend->peers(), gpu_memory.get()},
      agent::with_metrics(reporter.hooks(), metrics, clock));
  const auto scrape = [&metrics, &supervisor, &backend] {
    return metrics.render(live_figures(supervisor.health(), backend->rendezvous()));
  };
  auto health = agent::make_health_server(
      ctx, health_port, cfg.supervision.stall_timeout,
      [&supervisor] { return supervisor.health(); }, scrape);
  auto metrics_server = cfg.output.metrics_port
                            ? agent::make_metrics_server(ctx, *cfg.output.metrics_port, scrape)
                            : nullptr;
  backend->observe({progress_source(supervisor, clock),
                    [&reporter, &metrics](const rdzv::Exclusion& e, bool self) {
                      metrics.node_left_out();
                      reporter.on_exclusion(e, self);
                    },
                    [&reporter](const rdzv::SpareJoined& s) { reporter.on_spare_joined(s); }});
  if (cfg.supervision.stall_auto) {
    backend->share_stall(stall_share(supervisor));
  }
  backend->on_death_notice(guardian_sink(guardian));
  spdlog::info("starting {} worker(s) of {} on {} ({} restart(s) allowed)",
               cfg.group.nproc_per_node, util::quoted(cfg.command.training_script),
               backend->rendezvous().describe(), cfg.group.max_restarts);
  int status = 1;
  asio::co_spawn(ctx, supervisor.run(), [&](const std::exception_ptr& e, int code) {
    status = e ? 1 : code;
    ctx.stop();
    if (e) {
      std::rethrow_exception(e);
    }
  });
  ctx.run();
  guardian.clear_notice();  // an orderly end: the rendezvous heard whatever it had to
  reporter.finish(status);
  return status;
}

}  // namespace

int launch(const std::vector<std::string>& args, const util::Env& env) {
  auto parsed = value_or_throw(cli::parse_args(args, env));
  if (parsed.help) {
    (void)std::fputs(cli::render_help().c_str(), stdout);
    return util::k_exit_success;
  }
  if (parsed.version) {
    std::printf("%s\n", version_text().c_str());
    return util::k_exit_success;
  }
  std::optional<host::NvmlInfo> nvml;
  if (host::needs_nvml(parsed, env)) {
    nvml = host::query_nvml();
  }
  auto facts = host::gather_host_facts(env, nvml ? &*nvml : nullptr);
  const auto detected = detect_scheduler(env, parsed);
  if (host::needs_fabric(parsed, detected, env)) {
    auto fabric = host::query_fabric();
    facts.fabric_domain = std::move(fabric.domain);
    facts.fabric_detail = std::move(fabric.detail);
  }
  auto cfg = value_or_throw(config::resolve(parsed, env, facts, detected));
  setup_logging(cfg.log_level);
  for (const auto& line : cfg.warnings) {
    spdlog::warn("{}", line);
  }
  if (cfg.print_config) {
    (void)std::fputs(config::render_config(cfg).c_str(), stdout);
    return util::k_exit_success;
  }
  if (auto ok = preflight(cfg, env); !ok) {
    throw Fatal(make_error(ErrorCode::io, ok.error().message));
  }
  (void)std::signal(SIGPIPE, SIG_IGN);
  if (auto status = fan_out_if_needed(args, parsed, detected, env, cfg)) {
    return *status;
  }
  report_host_choices(cfg, facts, detected);
  config::HostPlan host_plan;
  host_plan.placements = host::plan_placements(cfg.group.nproc_per_node, cfg.resources, env,
                                               nvml.value_or(host::NvmlInfo{}));
  host_plan.torchrun = torchrun_flavor_for(cfg, env);
  const auto plan = config::with_host_plan(std::move(cfg), std::move(host_plan));
  auto env_plan = agent::make_worker_env_plan(plan.command, plan.supervision, plan.host, env,
                                              omp_threads_for(plan, facts, env));
  return run_agent(plan, env, std::move(env_plan));
}

}  // namespace ddprun::app
