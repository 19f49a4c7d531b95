// Supervision (restarts, monitoring, signals, events) and worker output (logs, -r, -t) flags.
#include "flag_groups.hpp"

namespace ddprun::cli::detail {

namespace {

std::vector<FlagSpec> supervision_flags() {
  using enum FlagKind;
  const auto g = FlagGroup::supervision;
  return {
      {"max_restarts", {"--max-restarts", "--max_restarts"}, valued, "0", "PET_MAX_RESTARTS",
       "N", {}, g, "Maximum number of worker group restarts before failing."},
      {"monitor_interval", {"--monitor-interval", "--monitor_interval"}, valued, "0.1",
       "PET_MONITOR_INTERVAL", "SECONDS", {}, g,
       "Interval, in seconds, between checks of the workers' state."},
      {"signals_to_handle", {"--signals-to-handle", "--signals_to_handle"}, valued,
       "SIGTERM,SIGINT,SIGHUP,SIGQUIT", "PET_SIGNALS_TO_HANDLE", "SIGNALS", {}, g,
       "Comma-separated signal names the launcher traps and forwards to the workers."},
      {"event_log_handler", {"--event-log-handler", "--event_log_handler"}, valued, "null",
       "PET_EVENT_LOG_HANDLER", "HANDLER", {}, g,
       "Name of the events sink: null or console."},
  };
}

std::vector<FlagSpec> output_flags() {
  using enum FlagKind;
  const auto g = FlagGroup::logs;
  return {
      {"log_dir", {"--log-dir", "--log_dir"}, valued, "", "PET_LOG_DIR", "DIR", {}, g,
       "Base directory for log files; empty means a new temporary directory, /dev/null "
       "disables log files."},
      {"redirects", {"-r", "--redirects"}, valued, "0", "PET_REDIRECTS", "STD", {}, g,
       "Redirect std streams into log files: 0 none, 1 stdout, 2 stderr, 3 both; per local "
       "rank as in 0:1,1:2."},
      {"tee", {"-t", "--tee"}, valued, "0", "PET_TEE", "STD", {}, g,
       "Tee std streams into log files and the console, same syntax as --redirects."},
      {"local_ranks_filter", {"--local-ranks-filter", "--local_ranks_filter"}, valued, "",
       "PET_LOCAL_RANKS_FILTER", "RANKS", {}, g,
       "Comma-separated local ranks whose output reaches the console, e.g. 0,1; files keep "
       "everything."},
      {"logs_specs", {"--logs-specs", "--logs_specs"}, valued, "", "", "NAME", {}, g,
       "torchrun.logs_specs entry point for a custom log layout; ddprun accepts only the "
       "default (empty). Not read from PET_."},
  };
}

}  // namespace

std::vector<FlagSpec> logging_flags() {
  auto flags = supervision_flags();
  append(flags, output_flags());
  return flags;
}

}  // namespace ddprun::cli::detail
