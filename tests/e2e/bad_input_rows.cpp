// The rows of the bad-input table (see bad_input_rows.hpp).
#include "bad_input_rows.hpp"

#include "ddprun/cli/flags.hpp"

#include <stdexcept>

namespace ddprun::test {

namespace {
constexpr std::string_view k_bool_env = "expected an integer: 0 is off, non-zero is on";
}  // namespace

const std::vector<OptionRow>& option_rows() {
  static const std::vector<OptionRow> rows = {
      // Nodes and workers.
      {"nnodes", "x", "expected N or MIN:MAX"},
      {"nnodes", "3:2", "MIN must not be greater than MAX"},
      {"nproc_per_node", "x", "expected a positive integer, cpu, gpu or auto"},
      {"nproc_per_node", "0", "expected a positive integer, cpu, gpu or auto"},
      {"nproc_per_node", "xpu", "ddprun cannot count Intel XPUs"},
      {"node_rank", "-1", "expected a non-negative integer"},
      {"node_rank", "1", "expected a node rank below --nnodes (1)"},
      {"numa_binding", "x", "choose from node, socket, exclusive, core-complex"},
      // Worker command.
      {"module", "x", "takes no value", std::string(k_bool_env)},
      {"no_python", "x", "takes no value", std::string(k_bool_env), {}, 2, true},
      {"run_path", "x", "takes no value", std::string(k_bool_env)},
      {"start_method", "x", "choose from spawn, fork, forkserver"},
      {"virtual_local_rank", "x", "takes no value", std::string(k_bool_env)},
      // Rendezvous.
      {"rdzv_backend", "etcd", "use --rdzv-backend etcd-v3"},
      {"rdzv_backend", "etcd-v2", "use --rdzv-backend etcd-v3"},
      {"rdzv_backend", "x", "expected static, c10d or etcd-v3"},
      {"rdzv_endpoint", "host:x", "expected host[:port] with a port 0-65535"},
      {"rdzv_endpoint", "bad host", "expected host[:port] with a port 0-65535"},
      {"rdzv_endpoint",
       "localhost:0",
       "port 0 (a free port) works for one node only, not for "
       "--nnodes 2",
       "",
       {"--nnodes=2", "--rdzv-backend=c10d"}},
      {"rdzv_conf", "join_timeout", "expected key=value items (k1=v1,k2=v2)"},
      {"rdzv_conf",
       "join_timeout=x",
       "expected a whole number of seconds",
       "",
       {"--rdzv-backend=c10d"}},
      {"rdzv_conf",
       "is_host=maybe",
       "expected is_host=1, true, t, yes, y or 0, false, f, no, n",
       "",
       {"--nnodes=2", "--rdzv-backend=c10d", "--rdzv-endpoint=127.0.0.1:29400"}},
      {"rdzv_endpoint", "ftp://etcd1", "is not http or https", "", {"--rdzv-backend=etcd-v3"}},
      {"rdzv_conf",
       "protocol=grpc",
       "expected protocol=http or protocol=https",
       "",
       {"--rdzv-backend=etcd-v3", "--rdzv-endpoint=etcd1"}},
      {"standalone", "x", "takes no value", std::string(k_bool_env)},
      {"master_addr", "bad host", "expected a host name or address"},
      {"master_port", "x", "expected a port number 0-65535"},
      {"master_port", "65536", "expected a port number 0-65535"},
      {"local_addr", "bad host", "expected a host name or address"},
      // Restarts and supervision.
      {"max_restarts", "-1", "expected a non-negative integer"},
      {"monitor_interval", "0", "expected a positive number of seconds"},
      {"monitor_interval", "x", "expected a positive number of seconds"},
      {"event_log_handler", "x", "expected null, console or dynamic_rendezvous"},
      // Logs and output.
      {"log_dir", "/dev/null/logs", "expected a directory that can be created"},
      {"redirects", "4", "expected 0-3 or a per-rank map such as 0:1,1:2"},
      {"tee", "0:4", "expected 0-3 or a per-rank map such as 0:1,1:2"},
      {"local_ranks_filter", "x", "expected a comma-separated list of local ranks"},
      {"logs_specs", "x", "expected default or nothing: custom Python log specs cannot be loaded"},
      // ddprun extras.
      {"python", "/nonexistent/python", "No such file or directory", "", {}, 1, true},
      {"use_env", "x", "takes no value"},
      {"legacy_local_rank", "x", "takes no value"},
      {"local_rank_arg", "x", "choose from underscore, dash"},
      {"agent_store", "x", "choose from auto, on, off"},
      {"shutdown_timeout", "x", "expected a non-negative number of seconds"},
      {"events_file", "/dev/null/events.jsonl", "expected a file that can be appended to"},
      {"line_output", "x", "choose from auto, on, off", "expected auto, on or off"},
      {"metrics_port", "x", "expected a port number 0-65535"},
      {"metrics_port", "65536", "expected a port number 0-65535"},
      {"log_level", "x", "expected one of debug, info, warning, error, critical, off"},
      {"omp_threads", "x", "expected torchrun, cpus or a positive integer"},
      {"omp_threads", "0", "expected torchrun, cpus or a positive integer"},
      {"pin_gpus", "x", "takes no value"},
      {"no_auto", "x", "takes no value"},
      {"launcher", "x", "choose from auto, pbsdsh, srun, ssh, none"},
      {"print_config", "x", "takes no value"},
      {"stacks_on_failure", "x", "takes no value"},
      {"stall_timeout", "x", "expected a non-negative number of seconds (0: off)"},
      {"stall_timeout", "-1", "expected a non-negative number of seconds (0: off)"},
      {"crash_loop_limit", "x", "expected a non-negative count (0: off)"},
      {"crash_loop_limit", "-1", "expected a non-negative count (0: off)"},
      {"crash_loop_window", "0", "expected a positive number of seconds"},
      {"segment", "x", "expected a node count (0: no segments)"},
      {"segment", "-1", "expected a node count (0: no segments)"},
      {"segment",
       "2",
       "expected a size that divides --nnodes 3: its MIN and MAX must be whole numbers of "
       "segments",
       "",
       {"--nnodes=3", "--rdzv-backend=c10d", "--rdzv-endpoint=127.0.0.1:29400"}},
      {"segment",
       "2",
       "expected no segment with the static backend, whose node ranks are --node-rank",
       "",
       {"--nnodes=2"}},
      {"crash_loop_window", "x", "expected a positive number of seconds"},
      {"stall_timeout", "auto:0", "FACTOR 1 to 1000"},
      {"stall_timeout", "auto:x", "FACTOR 1 to 1000"},
      {"stall_timeout", "automatic", "auto or auto:FACTOR"},
      {"stall_startup_timeout", "0", "expected a positive number of seconds"},
      {"stall_startup_timeout", "600", "only --stall-timeout auto reads it"},
      {"stall_timeout_floor", "x", "expected a positive number of seconds"},
      {"stall_timeout_floor", "30", "only --stall-timeout auto reads it"},
      {"health_check_timeout", "x", "expected a positive number of seconds"},
      {"health_check_timeout", "0", "expected a positive number of seconds"},
      {"health_check_interval", "x", "expected a non-negative number of seconds (0: off)"},
      {"health_check_interval", "5", "expected 0 without --health-check (nothing to run)"},
      {"gpu_memory_wait", "-1", "expected a non-negative number of seconds (0: off)"},
      {"gpu_memory_tolerance", "x", "expected a non-negative number of MiB"},
      {"gpu_memory_tolerance", "-5", "expected a non-negative number of MiB"},
  };
  return rows;
}

/// Options (by dest) and variables that take any text, with the reason.
const std::map<std::string, std::string>& options_without_bad_values() {
  static const std::map<std::string, std::string> reasons = {
      {"rdzv_id", "an opaque job id shared by the nodes; torchrun accepts any text"},
      {"PET_RDZV_ID", "an opaque job id shared by the nodes; torchrun accepts any text"},
      {"role", "any text is a role name, the empty one included, as in torchrun"},
      {"PET_ROLE", "any non-empty text is a role name, and an empty variable counts as unset"},
      {"signals_to_handle",
       "torchrun logs and ignores names it cannot use; ddprun warns and ignores them "
       "(tests/unit/config/torchrun_corpus_test.cpp)"},
      {"PET_SIGNALS_TO_HANDLE", "as --signals-to-handle"},
      {"duplicate_stdout_filters",
       "any text is a list of filters, as in torchrun; ddprun warns that it ignores them"},
      {"PET_DUPLICATE_STDOUT_FILTERS", "as --duplicate-stdout-filters"},
      {"duplicate_stderr_filters", "as --duplicate-stdout-filters"},
      {"PET_DUPLICATE_STDERR_FILTERS", "as --duplicate-stdout-filters"},
      {"health_check", "any text is a shell command; empty runs none"},
      {"PET_HEALTH_CHECK", "as --health-check"},
      {"PET_START_METHOD",
       "torchrun does not check a PET_ value against the choices and never uses it for a "
       "program; ddprun warns and uses spawn"},
  };
  return reasons;
}

namespace {

const cli::FlagSpec& flag_of(const std::string& dest) {
  for (const auto& flag : cli::flag_table()) {
    if (flag.dest.name() == dest) {
      return flag;
    }
  }
  throw std::invalid_argument("no option " + dest);
}

// The first long spelling: "--nproc-per-node", "--redirects".
std::string long_spelling(const cli::FlagSpec& flag) {
  for (auto s : flag.spellings) {
    if (s.substr(0, 2) == "--") {
      return std::string(s);
    }
  }
  return std::string(flag.spellings.front());
}

BadInput with(BadInput row, const std::string& name, const std::string& value) {
  row.env[name] = value;
  return row;
}

BadInput without(BadInput row, const std::string& name) {
  row.env.erase(name);
  return row;
}

}  // namespace

std::vector<BadInput> flag_rows() {
  std::vector<BadInput> out;
  for (const auto& row : option_rows()) {
    const auto spelling = long_spelling(flag_of(row.dest));
    auto args = row.context;
    args.push_back(spelling + "=" + row.value);
    out.push_back({spelling, row.value, row.expected, args, {}, row.status, row.python});
  }
  return out;
}

std::vector<BadInput> env_fallback_rows() {
  std::vector<BadInput> out;
  const auto& exempt = options_without_bad_values();
  for (const auto& row : option_rows()) {
    const std::string var(flag_of(row.dest).env_var);
    if (var.empty() || exempt.count(var) != 0 || row.value.empty()) {
      continue;
    }
    const auto& expected = row.env_expected.empty() ? row.expected : row.env_expected;
    out.push_back(
        {var, row.value, expected, row.context, {{var, row.value}}, row.status, row.python});
  }
  out.push_back({"DDPRUN_NODE_DOMAIN",
                 "rack 7",
                 "expected a domain name of 1-128 printable characters without spaces",
                 {"--nnodes=2", "--rdzv-backend=c10d", "--rdzv-endpoint=127.0.0.1:29400"},
                 {{"DDPRUN_NODE_DOMAIN", "rack 7"}}});
  out.push_back({"PYTHON_EXEC",
                 "/nonexistent/python",
                 "No such file or directory",
                 {},
                 {{"PYTHON_EXEC", "/nonexistent/python"}},
                 1,
                 true});
  return out;
}

std::map<std::string, std::map<std::string, std::string>> scheduler_baselines(
    const std::string& nodefile, const std::string& host) {
  return {
      {"slurm step",
       {{"SLURM_JOB_ID", "7"},
        {"SLURM_STEP_ID", "0"},
        {"SLURM_STEP_NODELIST", host},
        {"SLURM_STEP_NUM_NODES", "1"},
        {"SLURM_NODEID", "0"},
        {"SLURMD_NODENAME", host},
        {"SLURM_STEP_TASKS_PER_NODE", "1"},
        {"SLURM_RESTART_COUNT", "0"},
        {"SLURM_STEP_RESV_PORTS", "12000-12003"}}},
      {"slurm batch",
       {{"SLURM_JOBID", "7"},
        {"SLURM_JOB_NODELIST", host},
        {"SLURM_JOB_NUM_NODES", "1"},
        {"SLURMD_NODENAME", host},
        {"SLURM_NTASKS_PER_NODE", "1"},
        {"SLURM_GPUS_ON_NODE", "1"}}},
      {"pbs",
       {{"PBS_JOBID", "9.server"},
        {"PBS_NODEFILE", nodefile},
        {"PBS_NODENUM", "0"},
        {"PBS_NGPUS", "1"}}},
      {"lsf",
       {{"LSB_JOBID", "5"}, {"LSB_MCPU_HOSTS", host + " 4"}, {"JSM_NAMESPACE_LOCAL_SIZE", "1"}}},
      {"lsf hosts", {{"LSB_JOBID", "5"}, {"LSB_HOSTS", host + " " + host}}},
      {"flux",
       {{"FLUX_JOB_ID", "f1"},
        {"FLUX_JOB_SIZE", "1"},
        {"FLUX_JOB_NNODES", "1"},
        {"FLUX_TASK_RANK", "0"}}},
      {"openmpi",
       {{"OMPI_COMM_WORLD_SIZE", "1"},
        {"OMPI_COMM_WORLD_RANK", "0"},
        {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"}}},
      {"mpich", {{"PMI_SIZE", "1"}, {"PMI_RANK", "0"}, {"MPI_LOCALNRANKS", "1"}}},
      {"skypilot",
       {{"SKYPILOT_NODE_IPS", "127.0.0.1"},
        {"SKYPILOT_NUM_NODES", "1"},
        {"SKYPILOT_NODE_RANK", "0"},
        {"SKYPILOT_NUM_GPUS_PER_NODE", "0"}}},
  };
}

std::vector<BadInput> scheduler_rows(const std::string& nodefile, const std::string& host) {
  const auto base = scheduler_baselines(nodefile, host);
  const auto spoil = [&](const std::string& baseline, const std::string& var,
                         const std::string& value, const std::string& expected) {
    return with(BadInput{var, value, expected, {}, base.at(baseline)}, var, value);
  };
  return {
      spoil("slurm step", "SLURM_JOB_ID", "x7", "expected a decimal job id"),
      spoil("slurm batch", "SLURM_JOBID", "x7", "expected a decimal job id"),
      spoil("slurm step", "SLURM_STEP_NODELIST", "n[1-", "expected"),
      spoil("slurm step", "SLURM_STEP_NUM_NODES", "x", "expected the number of hosts in"),
      spoil("slurm step", "SLURM_STEP_NUM_NODES", "2", "expected the number of hosts in"),
      spoil("slurm batch", "SLURM_JOB_NODELIST", "n[1-", "expected"),
      spoil("slurm step", "SLURM_NODEID", "x", "expected an integer in [0, 0]"),
      spoil("slurm step", "SLURM_STEP_TASKS_PER_NODE", "x", "expected N(xM) counts"),
      without(spoil("slurm step", "SLURM_NTASKS_PER_NODE", "x", "expected an integer in"),
              "SLURM_STEP_TASKS_PER_NODE"),
      spoil("slurm batch", "SLURM_GPUS_ON_NODE", "x", "expected an integer in"),
      spoil("slurm step", "SLURM_RESTART_COUNT", "x", "expected an integer in"),
      spoil("slurm step", "SLURM_STEP_RESV_PORTS", "x", "expected"),
      spoil("pbs", "PBS_NODEFILE", "/nonexistent/nodefile", "No such file or directory"),
      spoil("pbs", "PBS_NODENUM", "x", "expected an integer in [0, 0]"),
      spoil("pbs", "PBS_NGPUS", "x", "expected an integer in"),
      spoil("lsf", "LSB_JOBID", "x", "expected a decimal job id"),
      spoil("lsf", "LSB_MCPU_HOSTS", host + " x", "expected 'host slots' pairs"),
      spoil("lsf", "JSM_NAMESPACE_LOCAL_SIZE", "x", "expected an integer in"),
      spoil("flux", "FLUX_JOB_SIZE", "x", "expected an integer in"),
      spoil("flux", "FLUX_JOB_NNODES", "x", "expected an integer in"),
      spoil("flux", "FLUX_TASK_RANK", "x", "expected an integer in"),
      spoil("openmpi", "OMPI_COMM_WORLD_SIZE", "x", "expected an integer in"),
      spoil("openmpi", "OMPI_COMM_WORLD_RANK", "x", "expected an integer in"),
      spoil("openmpi", "OMPI_COMM_WORLD_LOCAL_SIZE", "x", "expected an integer in"),
      spoil("mpich", "PMI_SIZE", "x", "expected an integer in"),
      spoil("mpich", "PMI_RANK", "x", "expected an integer in"),
      spoil("mpich", "MPI_LOCALNRANKS", "x", "expected an integer in"),
      spoil("skypilot", "SKYPILOT_NODE_IPS", " ", "expected the nodes' IPs"),
      spoil("skypilot", "SKYPILOT_NUM_NODES", "x", "expected an integer in [1, 1000000]"),
      spoil("skypilot", "SKYPILOT_NUM_NODES", "2", "expected the number of IPs in"),
      spoil("skypilot", "SKYPILOT_NODE_RANK", "1", "expected an integer in [0, 0]"),
      spoil("skypilot", "SKYPILOT_NUM_GPUS_PER_NODE", "x", "expected an integer in [0, 1000000]"),
      BadInput{"CUDA_VISIBLE_DEVICES",
               "abc",
               "'gpu' only where a CUDA GPU is visible",
               {"--nproc-per-node=gpu"},
               {{"CUDA_VISIBLE_DEVICES", "abc"}}},
  };
}

const std::map<std::string, std::string>& variables_without_bad_values() {
  static const std::string k_task_only =
      "set per task by the scheduler; fan-out leaves it out of the forwarded environment and "
      "never reads its value";
  static const std::string k_presence_only =
      "only tested for presence: a per-node starter launched this ddprun, so fan-out stays off";
  static const std::map<std::string, std::string> reasons = {
      {"SLURM_STEP_ID", "only part of the run id; Slurm's batch and extern steps are not numbers"},
      {"SLURM_STEPID", "only part of the run id; Slurm's batch and extern steps are not numbers"},
      {"SLURM_NODELIST", "read exactly as SLURM_JOB_NODELIST (its row), when that is unset"},
      {"SLURM_NNODES", "read exactly as SLURM_STEP_NUM_NODES (its row), when that is unset"},
      {"SLURMD_NODENAME", "a host name, only compared with the node list (a mismatch warns)"},
      {"SLURM_HET_SIZE", "only tested for presence (a heterogeneous job warns)"},
      {"SLURM_JOB_NUM_NODES", "not read: the job view counts SLURM_JOB_NODELIST's hosts"},
      {"PBS_JOBID", "an opaque job id (\"1234.server\"; a non-numeric one is hashed for the port)"},
      {"LSB_HOSTS", "host names; a list without this host is refused by the LSB_MCPU_HOSTS rules"},
      {"LSB_JOBINDEX", "only part of the run id, compared with \"0\""},
      {"FLUX_JOB_ID", "an opaque job id (Flux's are f58 text)"},
      {"PMIX_NAMESPACE", "an opaque job id"},
      {"SKYPILOT_TASK_ID", "an opaque id shared by the task's nodes, the run id as is"},
      {"SLURM_SUBMIT_DIR",
       "a directory, only where the job's token file may be (absent: no token)"},
      {"PBS_O_WORKDIR", "a directory, only where the job's token file may be (absent: no token)"},
      // Read by fan-out only (src/fanout/plan.cpp).
      {"SLURM_PROCID", k_task_only},
      {"SLURM_LOCALID", k_task_only},
      {"SLURM_TOPOLOGY_ADDR",
       "the node's place in Slurm's topology (sched/slurm.cpp set_topology): a value of another "
       "shape says nothing and ranks follow SLURM_NODEID, as on Slurm before 24.05"},
      {"SLURM_TOPOLOGY_ADDR_PATTERN", "as SLURM_TOPOLOGY_ADDR"},
      {"PBS_VNODENUM", k_task_only},
      {"PBS_JOBCOOKIE", k_task_only},
      {"PBS_MOMPORT", k_task_only},
      {"PBS_JOBFS", k_task_only},
      {"JSM_NAMESPACE_RANK", k_presence_only},
      {"PMIX_RANK", k_presence_only},
      {"MV2_COMM_WORLD_RANK", k_presence_only},
      {"PALS_RANKID", k_presence_only},
      {"PBS_TASKNUM",
       "compared with \"1\" only: another value means this ddprun was started per TM task (fan-out "
       "stays off)"},
  };
  return reasons;
}

}  // namespace ddprun::test
