// config::resolve: ParsedArgs (text + origin) -> LaunchConfig (typed, validated).
// Each step of the Resolver (resolver.hpp) converts one concern and records the origin of every
// value it sets; the rendezvous' steps are in resolve_rdzv.cpp.

#include "ddprun/cli/flags.hpp"
#include "ddprun/config/backends.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/output/std_spec.hpp"
#include "ddprun/process/exit_info.hpp"
#include "ddprun/util/strings.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "resolver.hpp"
#include "scheduler.hpp"

namespace ddprun::config {

namespace detail {

/// Whether `value` is one of the flag table's choices for `dest`.
bool is_choice(FlagKey dest, std::string_view value) {
  const auto& choices = cli::flag_spec(dest).choices;
  return std::find(choices.begin(), choices.end(), value) != choices.end();
}

/// The flag table's choices for `dest` as a message lists them: "spawn, fork or forkserver".
std::string choices_text(FlagKey dest) {
  const auto& choices = cli::flag_spec(dest).choices;
  std::string out;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    out += i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ";
    out += choices[i];
  }
  return out;
}

Result<void> Resolver::nodes_and_workers() {
  auto nodes = parse_nnodes(text(flag::k_nnodes));
  if (!nodes) {
    return named(flag::k_nnodes, nodes.error());
  }
  cfg_.rdzv.nnodes = *nodes;
  note(flag::k_nnodes, std::to_string(nodes->min) + ":" + std::to_string(nodes->max));
  const auto& n = text(flag::k_nproc_per_node);
  const int gpus = host_.gpu_count.value_or(0);
  const std::string gpu_from = host_.gpu_source.empty() ? "no GPU information" : host_.gpu_source;
  if (n == "cpu" || (n == "auto" && gpus == 0)) {
    cfg_.group.nproc_per_node = host_.cpu_count;
    cfg_.group.nproc_source =
        n == "cpu" ? "cpu: affinity mask" : "auto: no GPU (" + gpu_from + "), cpu: affinity mask";
  } else if (n == "gpu" || n == "auto") {
    if (gpus == 0) {
      auto cvd = env_.get("CUDA_VISIBLE_DEVICES");
      const auto why = host_.gpu_source == "CUDA_VISIBLE_DEVICES" && cvd
                           ? "CUDA_VISIBLE_DEVICES=" + quoted(*cvd)
                           : gpu_from;
      return bad(flag::k_nproc_per_node,
                 "a count, or 'gpu' only where a CUDA GPU is visible (none is: " + why + ")");
    }
    cfg_.group.nproc_per_node = gpus;
    cfg_.group.nproc_source = n + ": " + gpu_from;
  } else {
    // torch main's "xpu" counts Intel GPUs through SYCL, which ddprun cannot ask.
    auto v = int_in(flag::k_nproc_per_node, 1, 1 << 16,
                    n == "xpu" ? "a positive integer, cpu, gpu or auto (ddprun cannot count Intel "
                                 "XPUs: give their number)"
                               : "a positive integer, cpu, gpu or auto");
    if (!v) {
      return v.error();
    }
    cfg_.group.nproc_per_node = *v;
  }
  note(flag::k_nproc_per_node, std::to_string(cfg_.group.nproc_per_node),
       cfg_.group.nproc_source.empty()
           ? origin_of(flag::k_nproc_per_node)
           : origin_of(flag::k_nproc_per_node) + ", " + cfg_.group.nproc_source);
  return {};
}

Result<void> Resolver::placement() {
  const auto& omp = text(flag::k_omp_threads);
  if (omp == "torchrun" || omp == "cpus") {
    cfg_.resources.omp_mode = omp == "cpus" ? OmpMode::cpus : OmpMode::torchrun;
  } else {
    auto v = int_in(flag::k_omp_threads, 1, 1 << 16, "torchrun, cpus or a positive integer");
    if (!v) {
      return v.error();
    }
    cfg_.resources.omp_mode = OmpMode::fixed;
    cfg_.resources.omp_threads = *v;
  }
  note(flag::k_omp_threads, omp);
  const auto& numa = text(flag::k_numa_binding);
  if (!numa.empty() && !is_choice(flag::k_numa_binding, numa)) {
    return bad(flag::k_numa_binding, choices_text(flag::k_numa_binding));
  }
  for (auto b : {NumaBinding::node, NumaBinding::socket, NumaBinding::exclusive,
                 NumaBinding::core_complex}) {
    cfg_.resources.numa_binding = numa == to_string(b) ? b : cfg_.resources.numa_binding;
  }
  note(flag::k_numa_binding, numa.empty() ? "(none)" : numa, origin_of(flag::k_numa_binding));
  cfg_.resources.pin_gpus = on(flag::k_pin_gpus);
  note(flag::k_pin_gpus, cfg_.resources.pin_gpus ? "true" : "false", origin_of(flag::k_pin_gpus));
  cfg_.resources.virtual_local_rank = on(flag::k_virtual_local_rank);
  note(flag::k_virtual_local_rank, cfg_.resources.virtual_local_rank ? "true" : "false",
       origin_of(flag::k_virtual_local_rank));
  return {};
}
Result<void> Resolver::worker_command() {
  cfg_.command.module = on(flag::k_module);
  cfg_.command.no_python = on(flag::k_no_python);
  cfg_.command.run_path = on(flag::k_run_path);
  if (cfg_.command.module && cfg_.command.no_python) {
    return make_error(
        ErrorCode::usage,
        "don't use both the '--no-python' flag and the '--module' flag at the same time");
  }
  note(flag::k_module, cfg_.command.module ? "true" : "false", origin_of(flag::k_module));
  note(flag::k_no_python, cfg_.command.no_python ? "true" : "false", origin_of(flag::k_no_python));
  note(flag::k_run_path, cfg_.command.run_path ? "true" : "false", origin_of(flag::k_run_path));
  if (!text(flag::k_python).empty()) {
    cfg_.command.python = text(flag::k_python);
    cfg_.command.python_origin = origin_of(flag::k_python);
    note(flag::k_python, cfg_.command.python);
  } else {
    auto choice = default_python(env_, host_.exe_dir, host_.is_executable);
    cfg_.command.python = choice.path;
    cfg_.command.python_origin = choice.origin;
    note(flag::k_python, cfg_.command.python, choice.origin);
  }
  bool legacy = on(flag::k_legacy_local_rank);
  bool use_env = on(flag::k_use_env);
  if (legacy && !use_env && cfg_.command.no_python) {
    return make_error(ErrorCode::usage,
                      "when using the '--no-python' flag with --legacy-local-rank, you must also "
                      "set the '--use-env' flag");
  }
  cfg_.command.append_local_rank = legacy && !use_env;
  const auto& style = text(flag::k_local_rank_arg);
  if (style != "underscore" && style != "dash") {
    return bad(flag::k_local_rank_arg, "underscore (--local_rank=N) or dash (--local-rank=N)");
  }
  cfg_.command.local_rank_flag = style == "dash" ? "--local-rank" : "--local_rank";
  note("append_local_rank",
       cfg_.command.append_local_rank ? cfg_.command.local_rank_flag + "=N" : "no",
       origin_of(flag::k_legacy_local_rank));
  cfg_.group.role =
      text(flag::k_role);  // any text, as in torchrun (an empty role is a role named "")
  note(flag::k_role, cfg_.group.role);
  return {};
}

Result<void> Resolver::supervision() {
  auto restarts = int_in(flag::k_max_restarts, 0, 1 << 30, "a non-negative integer");
  if (!restarts) {
    return restarts.error();
  }
  cfg_.group.max_restarts = *restarts;
  note(flag::k_max_restarts, std::to_string(cfg_.group.max_restarts));
  auto interval = util::parse_seconds(text(flag::k_monitor_interval));
  if (!interval || interval->count() <= 0) {
    return bad(flag::k_monitor_interval, "a positive number of seconds");
  }
  cfg_.supervision.monitor_interval = *interval;
  note(flag::k_monitor_interval, text(flag::k_monitor_interval));
  cfg_.start_method = text(flag::k_start_method);
  if (!is_choice(flag::k_start_method, cfg_.start_method)) {
    // Only a PET_START_METHOD gets here (the parser checks the flag's choices); torchrun takes
    // it unchecked and never uses it for a program, so ddprun ignores it too.
    const std::string fallback(cli::flag_spec(flag::k_start_method).default_value);
    warn(flag::k_start_method, quoted(cfg_.start_method) + ": ignored, expected " +
                                   choices_text(flag::k_start_method) + " (" + fallback +
                                   " is used)");
    cfg_.start_method = fallback;
  }
  note(flag::k_start_method, cfg_.start_method);
  cfg_.supervision.stacks_on_failure = on(flag::k_stacks_on_failure);
  note(flag::k_stacks_on_failure, cfg_.supervision.stacks_on_failure ? "1" : "0");
  if (auto ok = stall_watch(); !ok) {
    return ok.error();
  }
  auto grace = util::parse_seconds(text(flag::k_shutdown_timeout));
  if (!grace) {
    return bad(flag::k_shutdown_timeout, "a non-negative number of seconds");
  }
  cfg_.supervision.shutdown_timeout = *grace;
  note(flag::k_shutdown_timeout, text(flag::k_shutdown_timeout));
  auto sigs = process::parse_signal_list(text(flag::k_signals_to_handle));
  for (const auto& ignored : sigs.ignored) {
    warn(flag::k_signals_to_handle, quoted(ignored.text) + ": ignored, " + ignored.reason);
  }
  cfg_.supervision.signals_to_handle = sigs.signals;
  cfg_.supervision.signals_to_handle_text = text(flag::k_signals_to_handle);
  note(flag::k_signals_to_handle, text(flag::k_signals_to_handle));
  return agent_store();
}

// --agent-store, and torch >= 2.4's opt-out of TCPStore sharing (TORCH_DISABLE_SHARE_RDZV_TCP_STORE
// =1): its dynamic (c10d) handler then gives the workers TORCHELASTIC_USE_AGENT_STORE=False;
// the static backend always shares.
/// --stall-timeout SECONDS, or auto[:FACTOR] with its start-up bound and floor, which only
/// auto reads (given without it they are a usage error: they would change nothing).
Result<void> Resolver::stall_watch() {
  auto stall = parse_stall_timeout(text(flag::k_stall_timeout));
  if (!stall) {
    return bad(flag::k_stall_timeout,
               "a non-negative number of seconds (0: off), auto or auto:FACTOR (FACTOR 1 to "
               "1000)");
  }
  note(flag::k_stall_timeout, text(flag::k_stall_timeout));
  auto startup = positive_seconds(flag::k_stall_startup_timeout);
  auto floor = positive_seconds(flag::k_stall_timeout_floor);
  if (!startup || !floor) {
    return !startup ? startup.error() : floor.error();
  }
  note(flag::k_stall_startup_timeout, text(flag::k_stall_startup_timeout));
  note(flag::k_stall_timeout_floor, text(flag::k_stall_timeout_floor));
  if (!stall->auto_factor) {
    for (auto key : {flag::k_stall_startup_timeout, flag::k_stall_timeout_floor}) {
      if (at(key).origin != cli::Origin::default_value) {
        return make_error(ErrorCode::usage, who(key) + " " + quoted(text(key)) +
                                                ": only --stall-timeout auto reads it (it is " +
                                                quoted(text(flag::k_stall_timeout)) + ")");
      }
    }
    cfg_.supervision.stall_timeout = stall->fixed;
    return {};
  }
  cfg_.supervision.stall_auto = StallAuto{*stall->auto_factor, *startup, *floor};
  cfg_.supervision.stall_timeout = *startup;
  return {};
}

Result<std::chrono::milliseconds> Resolver::positive_seconds(FlagKey dest) {
  auto v = util::parse_seconds(text(dest));
  if (!v || v->count() <= 0) {
    return bad(dest, "a positive number of seconds");
  }
  return *v;
}

Result<void> Resolver::agent_store() {
  const auto& store = text(flag::k_agent_store);
  if (!is_choice(flag::k_agent_store, store)) {
    return bad(flag::k_agent_store, choices_text(flag::k_agent_store));
  }
  cfg_.rdzv.agent_store = store == "on"    ? AgentStore::on
                          : store == "off" ? AgentStore::off
                                           : AgentStore::automatic;
  const bool opt_out = env_.get(std::string(k_no_share_env)).value_or("0") == "1";
  if (store == "auto" && opt_out &&
      row_of(cfg_.rdzv.rdzv_backend).store_host != StoreHost::node_rank_zero) {
    if (cfg_.rdzv.nnodes.max > 1) {
      cfg_.warnings.push_back(std::string(k_no_share_env) +
                              " '1': ignored for a multi-node job, the agent of group rank 0 "
                              "hosts each round's workers' store");
      note(flag::k_agent_store, store);
      return {};
    }
    cfg_.rdzv.agent_store = AgentStore::off;
    note(flag::k_agent_store, "off", "env " + std::string(k_no_share_env));
    return {};
  }
  note(flag::k_agent_store, store);
  return {};
}

Result<std::chrono::milliseconds> Resolver::seconds_at_least(FlagKey dest,
                                                             std::chrono::milliseconds lo,
                                                             const std::string& expected) {
  auto v = util::parse_seconds(text(dest));
  if (!v || *v < lo) {
    return bad(dest, expected);
  }
  note(dest, text(dest));
  return *v;
}

// --health-check and its bounds, --gpu-memory-wait and --gpu-memory-tolerance.
Result<void> Resolver::health_checks() {
  auto& h = cfg_.supervision.health;
  h.command = text(flag::k_health_check);
  note(flag::k_health_check, h.command);
  auto timeout = seconds_at_least(flag::k_health_check_timeout, std::chrono::milliseconds(1),
                                  "a positive number of seconds");
  auto interval = seconds_at_least(flag::k_health_check_interval, std::chrono::milliseconds(0),
                                   "a non-negative number of seconds (0: off)");
  auto wait = seconds_at_least(flag::k_gpu_memory_wait, std::chrono::milliseconds(0),
                               "a non-negative number of seconds (0: off)");
  for (const auto* r : {&timeout, &interval, &wait}) {
    if (!*r) {
      return r->error();
    }
  }
  if (interval->count() > 0 && h.command.empty()) {
    return bad(flag::k_health_check_interval, "0 without --health-check (nothing to run)");
  }
  h.timeout = *timeout;
  h.interval = *interval;
  h.gpu_memory_wait = *wait;
  auto tolerance = util::parse_int_in(text(flag::k_gpu_memory_tolerance), 0, std::int64_t{1} << 40);
  if (!tolerance) {
    return bad(flag::k_gpu_memory_tolerance, "a non-negative number of MiB");
  }
  h.gpu_memory_tolerance_mib = static_cast<std::uint64_t>(*tolerance);
  note(flag::k_gpu_memory_tolerance, text(flag::k_gpu_memory_tolerance));
  return {};
}

Result<LaunchConfig> Resolver::run() {
  for (auto step :
       {&Resolver::nodes_and_workers, &Resolver::placement, &Resolver::rendezvous,
        &Resolver::worker_command, &Resolver::supervision, &Resolver::health_checks,
        &Resolver::logging, &Resolver::rdzv_settings, &Resolver::crash_loop, &Resolver::topology}) {
    if (auto r = (this->*step)(); !r) {
      return r.error();
    }
  }
  cfg_.print_config = on(flag::k_print_config);
  cfg_.command.training_script = args_.training_script.value_or("");
  cfg_.command.training_script_args = args_.training_script_args;
  note("training_script", cfg_.command.training_script, "positional");
  cfg_.rdzv.node_index = detail::node_index_of(detected_);
  cfg_.rdzv.port_candidates = detail::derived_ports(args_, detected_);
  cfg_.rdzv.job = detected_.job;
  cfg_.output.log_dir_source = source_of(cfg_, "log_dir");
  return cfg_;
}

}  // namespace detail

std::string_view to_string(NumaBinding binding) {
  switch (binding) {
    case NumaBinding::none:
      return "";
    case NumaBinding::node:
      return "node";
    case NumaBinding::socket:
      return "socket";
    case NumaBinding::exclusive:
      return "exclusive";
    case NumaBinding::core_complex:
      return "core-complex";
  }
  return "";
}

LaunchConfig with_host_plan(LaunchConfig config, HostPlan host) {
  config.host = std::move(host);
  return config;
}

Result<LaunchConfig> resolve(const cli::ParsedArgs& args, const util::Env& env,
                             const HostFacts& host, const sched::Detected& detected) {
  const auto overlaid = detail::apply_scheduler(args, detected);
  return detail::Resolver(overlaid, env, host, detected).run();
}

std::string source_of(const LaunchConfig& config, std::string_view name) {
  const std::string env_prefix = "env ";
  for (const auto& item : config.items) {
    if (item.name == name && util::starts_with(item.origin, env_prefix)) {
      return item.origin.substr(env_prefix.size());
    }
  }
  std::string flag = "--" + std::string(name);
  std::replace(flag.begin() + 2, flag.end(), '_', '-');
  return flag;
}

std::string render_config(const LaunchConfig& config) {
  std::size_t width = 0;
  for (const auto& item : config.items) {
    width = std::max(width, item.name.size());
  }
  std::string out;
  for (const auto& item : config.items) {
    out += item.name + std::string(width - item.name.size(), ' ') + " = " + item.value + "  (" +
           item.origin + ")\n";
  }
  return out;
}

}  // namespace ddprun::config
