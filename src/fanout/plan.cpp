// Fan-out decisions and node command lines. Everything here is a function of its arguments; the
// machine facts (this binary's path, the working directory, the PBS nodefile) come in through
// PlanInputs. The remote side of each launcher is assumed to share the job script's filesystem
// (the binary, the working directory and the training script have the same paths everywhere),
// which is how HPC clusters are run.

#include "ddprun/fanout/plan.hpp"

#include "ddprun/config/backends.hpp"
#include "ddprun/sched/env_names.hpp"
#include "ddprun/util/strings.hpp"

#include <algorithm>
#include <array>

namespace ddprun::fanout {

namespace {

namespace n = sched::env_names;

constexpr std::string_view k_auto = "auto";
constexpr std::string_view k_none = "none";
constexpr std::string_view k_pbs = "pbs";
constexpr std::string_view k_slurm = "slurm";
constexpr std::string_view k_env_program = "/usr/bin/env";
constexpr std::string_view k_shell = "/bin/sh";
/// Runs "$@" in the directory "$1": pbsdsh starts tasks in the home directory.
constexpr std::string_view k_cd_then_exec = "cd \"$1\" && shift && exec \"$@\"";

/// Variables set by a launcher's remote side for each task (PBS TM, Slurm), never forwarded.
constexpr std::array k_task_vars = {
    n::k_pbs_tasknum,
    n::k_pbs_nodenum,
    n::k_pbs_vnodenum,
    n::k_pbs_jobcookie,
    n::k_pbs_momport,
    n::k_slurm_procid,
    n::k_slurm_localid,
    n::k_slurm_nodeid,
    n::k_slurmd_nodename,
    n::k_slurm_topology_addr,
    n::k_slurm_topology_addr_pattern,
};
/// Per-host values: the remote side has its own (GPU cgroup hooks set device lists per node).
constexpr std::array k_host_vars = {
    std::string_view("HOSTNAME"),
    std::string_view("HOST"),
    std::string_view("PWD"),
    std::string_view("OLDPWD"),
    std::string_view("SHLVL"),
    std::string_view("_"),
    std::string_view("TMPDIR"),
    n::k_pbs_jobfs,
    std::string_view("DISPLAY"),
    n::k_cuda_visible_devices,
    std::string_view("ROCR_VISIBLE_DEVICES"),
    std::string_view("HIP_VISIBLE_DEVICES"),
    std::string_view("GPU_DEVICE_ORDINAL"),
    std::string_view("ZE_AFFINITY_MASK"),
};
constexpr std::string_view k_ssh_prefix = "SSH_";

/// Variables whose presence means a per-node starter (other than PBS) launched this process.
constexpr std::array k_per_node_markers = {
    n::k_slurm_step_nodelist, n::k_ompi_size,   n::k_pmi_rank,
    n::k_pmix_rank,           n::k_pals_rankid, n::k_jsm_rank,
    n::k_flux_task_rank,      n::k_mv2_rank,    n::k_skypilot_node_rank,
};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool explicit_setting(const cli::ParsedArgs& args, cli::FlagKey dest) {
  auto origin = args.at(dest).origin;
  return origin == cli::Origin::flag || origin == cli::Origin::env;
}

std::optional<Via> via_named(std::string_view name) {
  for (auto via : {Via::pbsdsh, Via::srun, Via::ssh}) {
    if (to_string(via) == name) {
      return via;
    }
  }
  return std::nullopt;
}

Result<std::optional<Via>> refuse(const std::string& launcher, const std::string& why) {
  return make_error(ErrorCode::config, "--launcher " + launcher + ": " + why);
}

bool is_safe_for_shell(std::string_view word) {
  if (word.empty()) {
    return false;
  }
  return std::all_of(word.begin(), word.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_-./:=@%+,").find(c) != std::string_view::npos;
  });
}

std::vector<std::string> pbsdsh_command(const NodeInputs& in) {
  std::vector<std::string> argv = {"pbsdsh",
                                   "-n",
                                   std::to_string(in.pbs_vnode),
                                   "--",
                                   std::string(k_shell),
                                   "-c",
                                   std::string(k_cd_then_exec),
                                   "sh",
                                   in.cwd,
                                   std::string(k_env_program)};
  argv.insert(argv.end(), in.env.begin(), in.env.end());
  argv.insert(argv.end(), in.ddprun_argv.begin(), in.ddprun_argv.end());
  return argv;
}

std::vector<std::string> srun_command(const NodeInputs& in) {
  std::vector<std::string> argv = {
      "srun",         "--nodes=1",   "--ntasks=1", "--ntasks-per-node=1", "--nodelist=" + in.host,
      "--export=ALL", "--input=none"};
  argv.insert(argv.end(), in.ddprun_argv.begin(), in.ddprun_argv.end());
  return argv;
}

std::vector<std::string> ssh_command(const NodeInputs& in) {
  std::string remote = "cd " + shell_quote(in.cwd) + " && exec " + std::string(k_env_program);
  for (const auto& word : in.env) {
    remote += " " + shell_quote(word);
  }
  for (const auto& word : in.ddprun_argv) {
    remote += " " + shell_quote(word);
  }
  return {"ssh", "-n", "-o", "BatchMode=yes", in.host, remote};
}

}  // namespace

std::string_view to_string(Via via) {
  switch (via) {
    case Via::pbsdsh:
      return "pbsdsh";
    case Via::srun:
      return "srun";
    case Via::ssh:
      return "ssh";
  }
  return "?";
}

bool is_started_per_node(const util::Env& env) {
  for (auto name : k_per_node_markers) {
    if (env.get_nonempty(name)) {
      return true;
    }
  }
  auto task = env.get_nonempty(n::k_pbs_tasknum);
  auto node = env.get_nonempty(n::k_pbs_nodenum);
  return (task && *task != "1") || (node && *node != "0");
}

Result<std::optional<Via>> decide_via(const std::string& launcher, const sched::Detected& d,
                                      const util::Env& env) {
  if (launcher == k_none) {
    return std::optional<Via>();
  }
  const bool multi = d.hosts.size() > 1;
  const bool usable = multi && !is_started_per_node(env);
  if (launcher == k_auto) {
    if (!usable) {
      return std::optional<Via>();
    }
    if (d.scheduler == k_pbs) {
      return std::optional<Via>(Via::pbsdsh);
    }
    return d.scheduler == k_slurm ? std::optional<Via>(Via::srun) : std::optional<Via>();
  }
  auto via = via_named(launcher);
  if (!via) {
    return refuse(launcher, "expected auto, pbsdsh, srun, ssh or none");
  }
  if (!multi) {
    return refuse(launcher, "needs a multi-node job whose host list is known (Slurm, PBS, LSF)");
  }
  if (is_started_per_node(env)) {
    return refuse(launcher,
                  "this ddprun was already started once per node (srun step, TM "
                  "task or MPI rank); use --launcher none");
  }
  if ((*via == Via::pbsdsh && d.scheduler != k_pbs) ||
      (*via == Via::srun && d.scheduler != k_slurm)) {
    return refuse(launcher, "not inside a " + std::string(*via == Via::srun ? "Slurm" : "PBS") +
                                " job (scheduler: " + (d.scheduler.empty() ? "none" : d.scheduler) +
                                ")");
  }
  return via;
}

std::vector<int> first_line_per_host(const std::string& nodefile_contents) {
  std::vector<std::string> seen;
  std::vector<int> first;
  int index = 0;
  for (const auto& line : util::split(nodefile_contents, '\n')) {
    auto host = std::string(util::trim(line));
    if (host.empty()) {
      continue;
    }
    if (std::find(seen.begin(), seen.end(), host) == seen.end()) {
      seen.push_back(host);
      first.push_back(index);
    }
    ++index;
  }
  return first;
}

Result<std::optional<Via>> fan_out_via(const cli::ParsedArgs& args, const sched::Detected& d,
                                       const util::Env& env) {
  auto via = decide_via(args.at(cli::flag::k_launcher).value, d, env);
  if (!via || !*via) {
    return via;
  }
  if (explicit_setting(args, cli::flag::k_node_rank) || args.flag_on(cli::flag::k_standalone)) {
    return std::optional<Via>();  // the user starts one agent per node, or wants one node
  }
  return via;
}

sched::Detected whole_job_view(sched::Detected d) {
  if (d.hosts.size() < 2) {
    return d;
  }
  const std::string origin = d.scheduler + ": the job's host list";
  if (!d.nnodes) {
    d.nnodes = sched::Value{std::to_string(d.hosts.size()), origin + " (fan-out)"};
  }
  if (!d.rdzv_endpoint_host) {
    d.rdzv_endpoint_host = sched::Value{d.hosts.front(), origin + ", first host (fan-out)"};
  }
  return d;
}

Result<Target> make_target(const config::LaunchConfig& cfg, const std::vector<std::string>& hosts) {
  const auto& nodes = cfg.rdzv.nnodes;
  const auto source = config::source_of(cfg, "nnodes");
  if (nodes.min != nodes.max) {
    return make_error(ErrorCode::config, "fan-out needs a fixed node count, not " + source + " " +
                                             util::quoted(std::to_string(nodes.min) + ":" +
                                                          std::to_string(nodes.max)));
  }
  const auto count = static_cast<std::size_t>(nodes.max);
  if (count > hosts.size()) {
    return make_error(ErrorCode::config, source + " " + std::to_string(count) +
                                             " but the job has " + std::to_string(hosts.size()) +
                                             " nodes");
  }
  Target t;
  t.hosts.assign(hosts.begin(), hosts.begin() + static_cast<std::ptrdiff_t>(count));
  t.backend = cfg.rdzv.rdzv_backend;
  t.master_addr = cfg.rdzv.master_addr;
  t.master_port = cfg.rdzv.master_port;
  // Every scheduler with a host list also gives a port, so resolve() always has c10d's.
  if (config::row_of(t.backend).store_host != config::StoreHost::node_rank_zero) {
    t.rdzv_endpoint =
        config::endpoint_text(cfg.rdzv.rdzv_backend, cfg.rdzv.rdzv_endpoint, cfg.rdzv.etcd);
  }
  t.rdzv_id = cfg.rdzv.rdzv_id;
  return t;
}

std::vector<std::string> insert_before_script(const std::vector<std::string>& args,
                                              std::size_t script_arg_count,
                                              const std::vector<std::string>& extra) {
  std::size_t pos = args.size() - std::min(args.size(), script_arg_count + 1);
  if (pos > 0 && args[pos - 1] == "--") {
    --pos;
  }
  std::vector<std::string> out(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(pos));
  out.insert(out.end(), extra.begin(), extra.end());
  out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(pos), args.end());
  return out;
}

std::vector<std::string> node_flags(const Target& t, int node_rank) {
  std::vector<std::string> flags = {"--nnodes",    std::to_string(t.hosts.size()),
                                    "--node_rank", std::to_string(node_rank),
                                    "--rdzv_id",   t.rdzv_id};
  if (config::row_of(t.backend).store_host == config::StoreHost::node_rank_zero) {
    flags.insert(flags.end(),
                 {"--master_addr", t.master_addr, "--master_port", std::to_string(t.master_port)});
  } else {
    flags.insert(flags.end(), {"--rdzv_endpoint", t.rdzv_endpoint});
  }
  flags.insert(flags.end(), {"--launcher", std::string(k_none)});
  return flags;
}

std::vector<std::string> forwarded_env(const util::Env& env) {
  std::vector<std::string> out;
  for (const auto& [name, value] : env.vars()) {
    if (contains(k_task_vars, name) || contains(k_host_vars, name) ||
        name.rfind(k_ssh_prefix, 0) == 0 || name.find('=') != std::string::npos) {
      continue;
    }
    out.push_back(name + "=" + value);
  }
  return out;  // std::map iteration: already sorted by name
}

std::string shell_quote(std::string_view word) {
  if (is_safe_for_shell(word)) {
    return std::string(word);
  }
  std::string out = "'";
  for (char c : word) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

std::vector<std::string> node_command(const NodeInputs& in) {
  switch (in.via) {
    case Via::pbsdsh:
      return pbsdsh_command(in);
    case Via::srun:
      return srun_command(in);
    case Via::ssh:
      return ssh_command(in);
  }
  return {};
}

Result<std::optional<Plan>> make_plan(const config::LaunchConfig& cfg, const cli::ParsedArgs& args,
                                      const sched::Detected& d, const util::Env& env,
                                      const PlanInputs& in) {
  auto via = fan_out_via(args, d, env);
  if (!via) {
    return via.error();
  }
  if (!*via) {
    return std::optional<Plan>();
  }
  auto target = make_target(cfg, d.hosts);
  if (!target) {
    return target.error();
  }
  if (target->hosts.size() < 2) {
    return std::optional<Plan>();  // --nnodes 1 in a bigger job: run here only
  }
  const auto vnodes = first_line_per_host(in.pbs_nodefile);
  const auto env_words = forwarded_env(env);
  Plan plan{**via, {}};
  for (std::size_t i = 0; i < target->hosts.size(); ++i) {
    const int rank = static_cast<int>(i);
    NodeInputs node{**via,  target->hosts[i], rank,         i < vnodes.size() ? vnodes[i] : rank,
                    in.cwd, env_words,        {in.self_exe}};
    if (**via == Via::pbsdsh) {
      node.env.push_back(std::string(n::k_pbs_nodenum) + "=" + std::to_string(rank));
    }
    auto rest = insert_before_script(in.args, cfg.command.training_script_args.size(),
                                     node_flags(*target, rank));
    node.ddprun_argv.insert(node.ddprun_argv.end(), rest.begin(), rest.end());
    plan.nodes.push_back(Node{node.host, rank, node_command(node)});
  }
  return std::optional<Plan>(std::move(plan));
}

}  // namespace ddprun::fanout
