#pragma once
// Fan-out: ddprun run once in a multi-node PBS job script or Slurm batch script starts itself on
// every node through pbsdsh, srun or ssh. This header is the pure half: whether to fan out and
// the exact command line of each node. run.hpp executes a plan.

#include "ddprun/cli/args.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/sched/detect.hpp"
#include "ddprun/util/env.hpp"
#include "ddprun/util/result.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ddprun::fanout {

enum class Via { pbsdsh, srun, ssh };

/// The --launcher setting's name for `via` ("pbsdsh", "srun", "ssh").
std::string_view to_string(Via via);

/// True when this ddprun was started once per node by something (a TM task of pbsdsh, a srun
/// step, mpirun/mpiexec, jsrun, flux run): then it must not fan out itself. The job script's
/// own shell is task 1 on node 0 under PBS (PBS_TASKNUM=1, PBS_NODENUM=0), so those values do
/// not count as a TM task.
bool is_started_per_node(const util::Env& env);

/// How to fan out, or nullopt for a normal single-agent launch. `launcher` is the --launcher
/// text; `auto` picks pbsdsh under PBS and srun under Slurm and does not fan out elsewhere.
/// Explicit pbsdsh/srun/ssh still need a multi-node job with a known host list and a process
/// that was not started per node. ErrorCode::config when an explicit launcher cannot be used.
Result<std::optional<Via>> decide_via(const std::string& launcher, const sched::Detected& detected,
                                      const util::Env& env);

/// decide_via for this launch's --launcher, and nullopt also when the user starts one agent per
/// node (an explicit --node-rank) or wants one node (--standalone). Asked before
/// config::resolve: a launch that fans out is the whole job's (whole_job_view).
Result<std::optional<Via>> fan_out_via(const cli::ParsedArgs& args, const sched::Detected& detected,
                                       const util::Env& env);

/// What the scheduler says about a launch that starts one ddprun on each of `detected.hosts`,
/// for config::resolve to apply as it does for any launch. A Slurm batch script's job view
/// lists the hosts but gives no node count or head host (a launch there runs on that node
/// only); these become the number of hosts and the first one, as in a step over every host.
sched::Detected whole_job_view(sched::Detected detected);

/// For each distinct host of a PBS nodefile (first-seen order), the index of its first line:
/// pbsdsh -n counts nodefile lines (vnodes), so on Gadi with 48 lines per node node 1 is 48.
std::vector<int> first_line_per_host(const std::string& nodefile_contents);

/// Where the agents meet, taken by the fan-out parent from its resolved launch settings and
/// passed to every node.
struct Target {
  std::vector<std::string> hosts;  ///< one agent per host, node rank = index
  config::RdzvBackend backend = config::RdzvBackend::static_;
  std::string master_addr;    ///< static: the store's host
  int master_port = 0;        ///< static: the store's port
  std::string rdzv_endpoint;  ///< other backends: "host:port" (etcd-v3: every member)
  std::string rdzv_id;
};

/// The first cfg.nnodes of `hosts` (the job's, in order) and cfg's rendezvous: resolve()
/// already applied flag > PET_* > scheduler > default to whole_job_view's values. The nodes
/// get cfg.master_port (the first of cfg.port_candidates when the scheduler chose it) as an
/// explicit port: each is a separate srun step or TM task and would derive candidates of its
/// own. ErrorCode::config for an elastic --nnodes range or more nodes than the job has.
Result<Target> make_target(const config::LaunchConfig& cfg, const std::vector<std::string>& hosts);

/// The original launcher argv with `extra` inserted right before the training script (and a
/// "--" in front of it), so they win over the user's own copies (last one wins) and never reach
/// the script's arguments.
std::vector<std::string> insert_before_script(const std::vector<std::string>& args,
                                              std::size_t script_arg_count,
                                              const std::vector<std::string>& extra);

/// The flags node `node_rank` gets: --nnodes, --node_rank, the rendezvous address, --rdzv_id
/// and --launcher none.
std::vector<std::string> node_flags(const Target& target, int node_rank);

/// "NAME=value" for every variable worth passing to another node, sorted: everything except
/// what the remote side sets for itself (host, shell bookkeeping, TM/PBS task variables, GPU
/// visibility set per node by the scheduler's cgroup hook).
std::vector<std::string> forwarded_env(const util::Env& env);

/// POSIX shell single-quoting: 'it'\''s' for it's; words of safe characters stay bare.
std::string shell_quote(std::string_view word);

/// Everything a node command is built from.
struct NodeInputs {
  Via via = Via::pbsdsh;
  std::string host;
  int node_rank = 0;
  int pbs_vnode = 0;                     ///< pbsdsh -n index
  std::string cwd;                       ///< the job script's working directory
  std::vector<std::string> env;          ///< forwarded_env() plus per-node overrides
  std::vector<std::string> ddprun_argv;  ///< this binary followed by its node's arguments
};

/// The local command that starts ddprun on one node:
///   pbsdsh -n V -- /bin/sh -c 'cd "$1" && shift && exec "$@"' sh CWD /usr/bin/env K=V.. ddprun..
///   srun --nodes=1 --ntasks=1 --ntasks-per-node=1 --nodelist=HOST --export=ALL --input=none ..
///   ssh -n -o BatchMode=yes HOST 'cd CWD && exec /usr/bin/env K=V.. ddprun ..' (words quoted)
/// srun and ssh get no stdin: several of them must not compete for the job script's.
std::vector<std::string> node_command(const NodeInputs& in);

/// One node of a plan.
struct Node {
  std::string host;
  int node_rank = 0;
  std::vector<std::string> argv;
};

struct Plan {
  Via via = Via::pbsdsh;
  std::vector<Node> nodes;
};

/// What make_plan needs from the machine, gathered by the caller.
struct PlanInputs {
  std::vector<std::string> args;  ///< the launcher's argv without argv[0]
  std::string self_exe;           ///< this binary (readlink /proc/self/exe)
  std::string cwd;
  std::string pbs_nodefile;  ///< contents, under PBS
};

/// The whole plan: fan_out_via, make_target, then one node command per host. `cfg` is `args`
/// resolved over whole_job_view(detected).
Result<std::optional<Plan>> make_plan(const config::LaunchConfig& cfg, const cli::ParsedArgs& args,
                                      const sched::Detected& detected, const util::Env& env,
                                      const PlanInputs& in);

}  // namespace ddprun::fanout
