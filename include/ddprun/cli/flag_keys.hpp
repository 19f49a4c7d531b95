#pragma once
// The keys of the flag table: one constant per option, named after its argparse dest. The
// FlagSpec tables (src/cli/flags_*.cpp) and every lookup in ParsedArgs use these constants,
// so a misspelt key is a compile error instead of an std::out_of_range at run time.

#include <compare>
#include <string_view>

namespace ddprun::cli {

/// The name of one option's setting (its dest, e.g. "nproc_per_node"). It can only be made
/// from a compile-time string, and explicitly: code names real options through the
/// constants in `flag::`; only tests build synthetic tables with keys of their own.
class FlagKey {
 public:
  explicit consteval FlagKey(std::string_view dest) : dest_(dest) {}

  /// The dest text: the settings' name in --print-config and error messages.
  constexpr std::string_view name() const { return dest_; }

  friend constexpr bool operator==(FlagKey, FlagKey) = default;
  friend constexpr auto operator<=>(FlagKey, FlagKey) = default;

 private:
  std::string_view dest_;
};

/// One key per entry of the flag table, in table order.
namespace flag {

// Nodes, workers and the worker command (flags_launch.cpp).
inline constexpr FlagKey k_nnodes{"nnodes"};
inline constexpr FlagKey k_nproc_per_node{"nproc_per_node"};
inline constexpr FlagKey k_node_rank{"node_rank"};
inline constexpr FlagKey k_numa_binding{"numa_binding"};
inline constexpr FlagKey k_role{"role"};
inline constexpr FlagKey k_module{"module"};
inline constexpr FlagKey k_no_python{"no_python"};
inline constexpr FlagKey k_run_path{"run_path"};
inline constexpr FlagKey k_start_method{"start_method"};
inline constexpr FlagKey k_virtual_local_rank{"virtual_local_rank"};

// Rendezvous (flags_rdzv.cpp).
inline constexpr FlagKey k_rdzv_backend{"rdzv_backend"};
inline constexpr FlagKey k_rdzv_endpoint{"rdzv_endpoint"};
inline constexpr FlagKey k_rdzv_id{"rdzv_id"};
inline constexpr FlagKey k_rdzv_conf{"rdzv_conf"};
inline constexpr FlagKey k_standalone{"standalone"};
inline constexpr FlagKey k_master_addr{"master_addr"};
inline constexpr FlagKey k_master_port{"master_port"};
inline constexpr FlagKey k_local_addr{"local_addr"};

// Supervision, logs and worker output (flags_logging.cpp).
inline constexpr FlagKey k_max_restarts{"max_restarts"};
inline constexpr FlagKey k_monitor_interval{"monitor_interval"};
inline constexpr FlagKey k_signals_to_handle{"signals_to_handle"};
inline constexpr FlagKey k_event_log_handler{"event_log_handler"};
inline constexpr FlagKey k_log_dir{"log_dir"};
inline constexpr FlagKey k_redirects{"redirects"};
inline constexpr FlagKey k_tee{"tee"};
inline constexpr FlagKey k_local_ranks_filter{"local_ranks_filter"};
inline constexpr FlagKey k_logs_specs{"logs_specs"};
inline constexpr FlagKey k_duplicate_stdout_filters{"duplicate_stdout_filters"};
inline constexpr FlagKey k_duplicate_stderr_filters{"duplicate_stderr_filters"};

// ddprun's own options and the legacy launcher's (flags_ddprun.cpp).
inline constexpr FlagKey k_python{"python"};
inline constexpr FlagKey k_use_env{"use_env"};
inline constexpr FlagKey k_legacy_local_rank{"legacy_local_rank"};
inline constexpr FlagKey k_local_rank_arg{"local_rank_arg"};
inline constexpr FlagKey k_agent_store{"agent_store"};
inline constexpr FlagKey k_shutdown_timeout{"shutdown_timeout"};
inline constexpr FlagKey k_events_file{"events_file"};
inline constexpr FlagKey k_line_output{"line_output"};
inline constexpr FlagKey k_metrics_port{"metrics_port"};
inline constexpr FlagKey k_stacks_on_failure{"stacks_on_failure"};
inline constexpr FlagKey k_stall_timeout{"stall_timeout"};
inline constexpr FlagKey k_crash_loop_limit{"crash_loop_limit"};
inline constexpr FlagKey k_segment{"segment"};
inline constexpr FlagKey k_crash_loop_window{"crash_loop_window"};
inline constexpr FlagKey k_stall_startup_timeout{"stall_startup_timeout"};
inline constexpr FlagKey k_stall_timeout_floor{"stall_timeout_floor"};
inline constexpr FlagKey k_log_level{"log_level"};
inline constexpr FlagKey k_health_check{"health_check"};
inline constexpr FlagKey k_health_check_timeout{"health_check_timeout"};
inline constexpr FlagKey k_health_check_interval{"health_check_interval"};
inline constexpr FlagKey k_gpu_memory_wait{"gpu_memory_wait"};
inline constexpr FlagKey k_gpu_memory_tolerance{"gpu_memory_tolerance"};
inline constexpr FlagKey k_omp_threads{"omp_threads"};
inline constexpr FlagKey k_pin_gpus{"pin_gpus"};
inline constexpr FlagKey k_no_auto{"no_auto"};
inline constexpr FlagKey k_launcher{"launcher"};
inline constexpr FlagKey k_print_config{"print_config"};
// Actions rather than settings: they set ParsedArgs::version and ::help.
inline constexpr FlagKey k_version{"version"};
inline constexpr FlagKey k_help{"help"};

}  // namespace flag

}  // namespace ddprun::cli
