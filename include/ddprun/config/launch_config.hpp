#pragma once
// LaunchConfig: the typed, validated launch settings, each with a note of where it came from.
// resolve() is pure: host facts (CPU and GPU counts, a random run id) are passed in.

#include "ddprun/cli/args.hpp"
#include "ddprun/config/torchrun_flavor.hpp"
#include "ddprun/etcd/endpoints.hpp"
#include "ddprun/output/std_spec.hpp"
#include "ddprun/rdzv/settings.hpp"
#include "ddprun/sched/detect.hpp"
#include "ddprun/util/env.hpp"
#include "ddprun/util/result.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::config {

struct NodeRange {
  int min = 1;
  int max = 1;
};

struct Endpoint {
  std::string host;
  int port = 0;
};

/// `--stall-timeout auto[:FACTOR]`: the timeout is learned from the workers' progress
/// (docs/reliability.md, "The learned stall timeout").
struct StallAuto {
  double factor = 5.0;  ///< FACTOR: the timeout is this many times the longest healthy gap
  /// --stall-startup-timeout: the timeout until the group has made progress for this long.
  std::chrono::milliseconds startup{1800000};
  std::chrono::milliseconds floor{60000};  ///< --stall-timeout-floor: the least learned timeout
};

/// `--stall-timeout` text: SECONDS (0: off), `auto` or `auto:FACTOR`.
struct StallTimeoutText {
  std::chrono::milliseconds fixed{0};  ///< SECONDS; 0 for `auto`
  std::optional<double> auto_factor;   ///< set for `auto` (5) and `auto:FACTOR`
};

enum class AgentStore { automatic, on, off };

/// --rdzv-backend: static (ranks from --node-rank, the store at --master-addr:--master-port),
/// c10d (ranks from the rendezvous, the store at --rdzv-endpoint) or etcd-v3 (the same
/// rendezvous, its state in the etcd cluster at --rdzv-endpoint).
enum class RdzvBackend { static_, c10d, etcd_v3 };

/// "static", "c10d" or "etcd-v3", as the flag spells it.
std::string_view to_string(RdzvBackend backend);

/// `--rdzv-backend` text: "static", "c10d" or "etcd-v3". torchrun's "etcd" and "etcd-v2" are
/// refused with the reason (etcd's v2 API is gone) and a pointer to etcd-v3.
Result<RdzvBackend> parse_rdzv_backend(std::string_view text);

/// The default etcd key prefix: a run's keys live under "<key_prefix>/<rdzv_id>/".
inline constexpr std::string_view k_default_etcd_key_prefix = "/ddprun/rdzv";

/// --rdzv-backend etcd-v3: the members (--rdzv-endpoint) and how to reach them (--rdzv-conf
/// protocol, cacert, cert, key, key_prefix, username, password_file).
struct EtcdSettings {
  std::vector<etcd::Endpoint> endpoints;
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  std::string key_prefix{k_default_etcd_key_prefix};  ///< without a trailing '/'
  std::string username;
  std::string password_file;  ///< the password is read from here at start, never a flag
  bool tls = false;           ///< protocol=https: entries without a scheme use TLS
  /// end_record_ttl: how long the record of how a run ended outlives its keys (rdzv/run_end.hpp).
  std::chrono::seconds end_record_ttl{3600};
};

/// Reads the etcd-v3 --rdzv-conf pairs (endpoints stay empty: resolve() parses them with
/// `tls` as the default scheme). An error says what was expected ("protocol=http or
/// protocol=https", "cert and key together ...") for the caller to prefix with the option.
Result<EtcdSettings> read_etcd_conf(const std::map<std::string, std::string>& conf);
/// etcd-v3's `--rdzv-endpoint` text: the members, "[http://|https://]HOST[:PORT],...", entries
/// without a scheme on TLS when `tls` (EtcdSettings::tls). An error quotes the text and says
/// what was expected, for the caller to prefix with the option.
Result<std::vector<etcd::Endpoint>> parse_etcd_members(std::string_view text, bool tls);

/// --omp-threads: torchrun's default (1 when several workers), CPUs in the mask / nproc, or N.
enum class OmpMode { torchrun, cpus, fixed };

/// Where one local worker runs; decided by the launch after resolve() (it needs sysfs and NVML).
struct WorkerPlacement {
  std::vector<int> cpus;                            ///< empty: inherit the agent's mask
  std::optional<std::string> cuda_visible_devices;  ///< set: the worker's own value (--pin-gpus)
  std::optional<int> local_rank_env;  ///< set: LOCAL_RANK differs from the local rank (virtual)
};

/// The node health checks before each round (--health-check*, --gpu-memory-*;
/// docs/reliability.md, "Node health checks").
struct HealthChecks {
  std::string command;                               ///< /bin/sh -c text; empty: no command
  std::chrono::milliseconds timeout{60000};          ///< the command's bound
  std::chrono::milliseconds interval{0};             ///< also while workers run, this often; 0: not
  std::chrono::milliseconds gpu_memory_wait{50000};  ///< after a group stops; 0: off
  std::uint64_t gpu_memory_tolerance_mib = 512;      ///< used memory that counts as freed
};

/// True when `path` names a file this process may execute (a symlink counts by its target).
using IsExecutable = std::function<bool(const std::string& path)>;

/// Facts about this machine that resolve() needs; gathered by the app's shell.
struct HostFacts {
  int cpu_count = 1;             ///< CPUs in the inherited affinity mask
  std::optional<int> gpu_count;  ///< nullopt: no GPU information available
  std::string random_run_id;     ///< a fresh uuid4 text, used by --standalone
  std::string gpu_source;        ///< which source gave gpu_count ("NVML", ...)
  /// The GPUs' NVLink domain (host/fabric.hpp), when it was read and NVML reports one.
  std::optional<std::string> fabric_domain;
  std::string fabric_detail;   ///< where fabric_domain came from, or why there is none
  std::string exe_dir;         ///< directory of ddprun's own executable; "" when unknown
  IsExecutable is_executable;  ///< the file test default_python() uses; empty: none is
};

/// The workers' interpreter and where it came from (for --print-config).
struct PythonChoice {
  std::string path;
  std::string origin;
};

/// The workers' interpreter when --python is empty. torchrun runs workers with its own
/// interpreter; ddprun, not being Python, takes $PYTHON_EXEC, else the python3 installed beside
/// its own executable (`exe_dir`/python3: a venv's or conda environment's bin/, /usr/bin for the
/// .deb) when `is_executable` says so, else "python3" looked up on PATH. The path beside is
/// kept as it is, not resolved: a venv's python3 is a symlink, and exec'ing the link is what
/// makes the venv active.
PythonChoice default_python(const util::Env& env, std::string_view exe_dir,
                            const IsExecutable& is_executable);

/// One line of --print-config.
struct ConfigItem {
  std::string name;
  std::string value;
  std::string origin;
};

/// --log-level / $LOGLEVEL, any case: the level of ddprun's own messages ("warn" is warning).
enum class LogLevel { trace, debug, info, warning, error, critical, off };

/// --numa-binding: none, or how each worker's CPUs are chosen (host/topology.hpp).
enum class NumaBinding { none, node, socket, exclusive, core_complex };

/// "node", "socket", "exclusive" or "core-complex" as the flag spells it; "" for none.
std::string_view to_string(NumaBinding binding);

// The launch plan in parts, each taken by the code that reads it (docs/architecture.md,
// "The life of a launch"). LaunchConfig holds all of them as named members; resolve() fills
// every part but `host`, which the launch adds (with_host_plan) before anything starts.

/// The local worker group: its role, size and restart budget, which the rendezvous, the
/// supervisor and the output all name.
struct WorkerGroup {
  std::string role = "default";
  int nproc_per_node = 1;
  std::string nproc_source;  ///< "gpu: NVML" etc. when --nproc-per-node was a word, else ""
  int max_restarts = 0;
};

/// How a worker is started (agent/worker_spec.hpp) and what a failure report says about it.
struct WorkerCommand {
  bool module = false;
  bool no_python = false;
  bool run_path = false;
  std::string python;         ///< interpreter for Python workers
  std::string python_origin;  ///< where `python` came from ("flag --python", ...)
  bool append_local_rank = false;
  std::string local_rank_flag = "--local_rank";
  std::string training_script;
  std::vector<std::string> training_script_args;
};

/// What each local worker is given of this machine: threads, CPUs and GPUs, as asked
/// (host/placement.hpp turns it into a HostPlan).
struct WorkerResources {
  OmpMode omp_mode = OmpMode::torchrun;
  int omp_threads = 0;  ///< the N of --omp-threads N
  NumaBinding numa_binding = NumaBinding::none;
  bool pin_gpus = false;
  bool virtual_local_rank = false;  ///< --virtual-local-rank: LOCAL_RANK=0, one device each
};

/// What the launch decides from this host (sysfs, NVML, the workers' torch) before anything
/// starts; empty in resolve()'s result.
struct HostPlan {
  std::vector<WorkerPlacement> placements;  ///< per local rank; empty: inherit everything
  TorchrunFlavor torchrun;                  ///< from the workers' torch
};

/// How this node finds the others: the rendezvous backend, its endpoint and settings, the
/// static ranks and the store ports.
struct RendezvousPlan {
  NodeRange nnodes;
  RdzvBackend rdzv_backend = RdzvBackend::static_;
  Endpoint rdzv_endpoint;  ///< host empty when not given; etcd-v3: the first member
  EtcdSettings etcd;       ///< etcd-v3 only
  std::string rdzv_id = "none";
  std::map<std::string, std::string> rdzv_conf;
  bool standalone = false;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::string local_addr;
  std::optional<int> node_index;  ///< this node's index from the scheduler, when known
  /// The node's domain (rdzv/rank_order.hpp): --rdzv-conf node_domain, DDPRUN_NODE_DOMAIN, the
  /// GPUs' NVLink fabric, Slurm's block; "" for a node alone. Where it came from, or why none.
  std::string domain;
  std::string domain_origin;
  std::string topology;  ///< the scheduler's topology path (SLURM_TOPOLOGY_ADDR), or ""
  /// The job's candidate rendezvous store ports, when the scheduler chose the port (static
  /// --master-port or the c10d endpoint's); empty when the user gave it. The host binds the
  /// first free one, the others find it.
  std::vector<int> port_candidates;
  /// The dynamic rendezvous' settings from --rdzv-conf and --nnodes (min = max for static,
  /// whose join timeout is torchrun's 900 s unless --rdzv-conf timeout says otherwise).
  rdzv::RdzvSettings rdzv_settings;
  std::optional<sched::Job> job;  ///< the batch job, for its shared token file
  AgentStore agent_store = AgentStore::automatic;
};

/// How the supervisor watches, stops and restarts the group.
struct SupervisorOptions {
  std::chrono::milliseconds monitor_interval{100};
  std::chrono::milliseconds shutdown_timeout{30000};
  std::vector<int> signals_to_handle;
  std::string signals_to_handle_text;  ///< as given: TORCHELASTIC_SIGNALS_TO_HANDLE (torch >= 2.9)
  bool stacks_on_failure = false;
  /// --stall-timeout: the group is hung after this long without output or a file-timer
  /// request; 0 is off. With `auto` it is the start-up bound (stall_auto.startup), which the
  /// learned value replaces once it settles (agent/stall_estimator.hpp).
  std::chrono::milliseconds stall_timeout{0};
  std::optional<StallAuto> stall_auto;  ///< --stall-timeout auto[:FACTOR]
  HealthChecks health;
};

/// Where the workers' output and the agent's records go.
/// --line-output: when the workers' console streams go through the agent's line router.
enum class LineOutput { automatic, on, off };

struct OutputPlan {
  std::string log_dir;
  std::string log_dir_source;        ///< source_of(config, "log_dir"), for messages
  output::StdSpec redirects;         ///< -r, parsed (--print-config shows the text)
  output::StdSpec tee;               ///< -t, parsed
  std::set<int> local_ranks_filter;  ///< empty: every local rank's output is shown
  LineOutput line_output = LineOutput::automatic;
  std::string events_file;
  std::optional<int> metrics_port;  ///< --metrics-port; nullopt: no metrics-only server
};

/// The whole plan: every part by name, and what only the launch itself reads.
struct LaunchConfig {
  WorkerGroup group;
  WorkerCommand command;
  WorkerResources resources;
  HostPlan host;
  RendezvousPlan rdzv;
  SupervisorOptions supervision;
  OutputPlan output;
  std::string start_method = "spawn";      ///< only shown by --print-config
  std::string event_log_handler = "null";  ///< only shown by --print-config
  bool print_config = false;
  LogLevel log_level = LogLevel::info;
  std::vector<ConfigItem> items;  ///< every setting with its origin, for --print-config
  /// Values torchrun would silently ignore (so ddprun does too), one line each naming the value;
  /// the app prints them at WARNING before anything starts.
  std::vector<std::string> warnings;
};

/// The finished plan: `config` with the launch's host decisions in place. Everything after
/// takes the result const.
LaunchConfig with_host_plan(LaunchConfig config, HostPlan host);

/// The launch policy in one pure function: overlays what the scheduler detected on the settings
/// the user left at their defaults (flag > PET_* > scheduler > default; an empty `detected`, as
/// with --no-auto, changes nothing), then converts and validates every setting (the -r/-t/
/// --local-ranks-filter values and the --rdzv-conf rendezvous settings included) and fills the
/// node index and the derived store ports from `detected`. Errors are ErrorCode::usage with one
/// line naming the flag (or environment variable), the value and what was expected.
Result<LaunchConfig> resolve(const cli::ParsedArgs& args, const util::Env& env,
                             const HostFacts& host, const sched::Detected& detected);

/// The parsers' errors quote the text but do not name the option: resolve() prefixes the flag
/// or environment variable the text came from.
/// `--nnodes` text: "N" or "MIN:MAX" with 0 < MIN <= MAX.
Result<NodeRange> parse_nnodes(std::string_view text);
/// `--stall-timeout` text: a non-negative number of seconds, `auto` or `auto:FACTOR` with
/// 1 <= FACTOR <= 1000 (a factor below 1 could stop a group for a gap it already came through).
Result<StallTimeoutText> parse_stall_timeout(std::string_view text);
/// `--rdzv-conf` text: "k1=v1,k2=v2" (keys and values stripped, neither may be empty).
Result<std::map<std::string, std::string>> parse_rdzv_conf(std::string_view text);
/// A host name or address as the endpoints accept it: letters, digits, '.', '-', '_', ':'.
bool is_host_text(std::string_view text);
/// `host[:port]`, `[v6]:port` or `[v6]`; a missing port becomes `default_port`.
Result<Endpoint> parse_endpoint(std::string_view text, int default_port);

/// Where a resolved setting came from, for messages: its variable ("PET_LOG_DIR",
/// "PYTHON_EXEC") when the environment gave it, else its flag ("--log-dir").
std::string source_of(const LaunchConfig& config, std::string_view name);

/// The "name = value (origin)" listing printed by --print-config.
std::string render_config(const LaunchConfig& config);

}  // namespace ddprun::config
