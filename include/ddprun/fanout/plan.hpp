#pragma once
// Fan-out: ddprun run once in a multi-node PBS job script or Slurm batch script starts itself on
// every node through pbsdsh, srun or ssh. This header is the pure half: whether to fan out and
// the exact command line of each node. run.hpp executes a plan.

#include "ddprun/cli/args.hpp"
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

/// For each distinct host of a PBS nodefile (first-seen order), the index of its first line:
/// pbsdsh -n counts nodefile lines (vnodes), so on Gadi with 48 lines per node node 1 is 48.
std::vector<int> first_line_per_host(const std::string& nodefile_contents);

/// Where the agents meet, computed once by the fan-out parent and passed to every node.
struct Target {
  std::vector<std::string> hosts;  ///< one agent per host, node rank = index
  std::string backend;             ///< rdzv_backend text ("static", "c10d", ...)
  std::string master_addr;         ///< static: head host; c10d: endpoint host
  int master_port = 0;
  std::string rdzv_endpoint;  ///< non-static backends: "host:port"
  std::string rdzv_id;
};

/// Hosts (the first --nnodes N when given as a fixed count), head host, port and run id from
/// the detected values, unless the user set them. ErrorCode::config for an elastic --nnodes
/// range or more nodes than the job has.
Result<Target> make_target(const cli::ParsedArgs& args, const sched::Detected& detected);

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

/// The whole plan: decide_via, make_target, then one node command per host.
Result<std::optional<Plan>> make_plan(const cli::ParsedArgs& args, const sched::Detected& detected,
                                      const util::Env& env, const PlanInputs& in);

}  // namespace ddprun::fanout
