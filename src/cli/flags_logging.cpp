// Supervision (restarts, monitoring, signals, events) and worker output (logs, -r, -t) flags.
#include "flag_groups.hpp"

namespace ddprun::cli::detail {

namespace {

std::vector<FlagSpec> supervision_flags() {
  const auto g = FlagGroup::supervision;
  return {
      {.dest = flag::k_max_restarts,
       .spellings = {"--max-restarts", "--max_restarts"},
       .kind = FlagKind::valued,
       .default_value = "0",
       .env_var = "PET_MAX_RESTARTS",
       .metavar = "N",
       .group = g,
       .help = "Maximum number of worker group restarts before failing."},
      {.dest = flag::k_monitor_interval,
       .spellings = {"--monitor-interval", "--monitor_interval"},
       .kind = FlagKind::valued,
       .default_value = "0.1",
       .env_var = "PET_MONITOR_INTERVAL",
       .metavar = "SECONDS",
       .group = g,
       .help = "Accepted for torchrun compatibility (must be > 0): torchrun polls its workers at "
               "this interval, ddprun learns of every exit at once and does not poll."},
      {.dest = flag::k_signals_to_handle,
       .spellings = {"--signals-to-handle", "--signals_to_handle"},
       .kind = FlagKind::valued,
       .default_value = "SIGTERM,SIGINT,SIGHUP,SIGQUIT",
       .env_var = "PET_SIGNALS_TO_HANDLE",
       .metavar = "SIGNALS",
       .group = g,
       .help = "Comma-separated signal names the launcher traps and forwards to the workers; a "
               "name that is not a signal (or SIGKILL, SIGSTOP, SIGCHLD) is ignored with a "
               "warning, as torchrun does."},
      {.dest = flag::k_event_log_handler,
       .spellings = {"--event-log-handler", "--event_log_handler"},
       .kind = FlagKind::valued,
       .default_value = "null",
       .env_var = "PET_EVENT_LOG_HANDLER",
       .metavar = "HANDLER",
       .group = g,
       .help = "torchrun's events sink (null, console or dynamic_rendezvous): accepted and "
               "ignored; ddprun writes its events with --events-file."},
  };
}

std::vector<FlagSpec> output_flags() {
  const auto g = FlagGroup::logs;
  return {
      {.dest = flag::k_log_dir,
       .spellings = {"--log-dir", "--log_dir"},
       .kind = FlagKind::valued,
       .env_var = "PET_LOG_DIR",
       .metavar = "DIR",
       .group = g,
       .help = "Base directory for log files; empty means a new temporary directory, /dev/null "
               "disables log files."},
      {.dest = flag::k_redirects,
       .spellings = {"-r", "--redirects"},
       .kind = FlagKind::valued,
       .default_value = "0",
       .env_var = "PET_REDIRECTS",
       .metavar = "STD",
       .group = g,
       .help = "Redirect std streams into log files: 0 none, 1 stdout, 2 stderr, 3 both; per local "
               "rank as in 0:1,1:2."},
      {.dest = flag::k_tee,
       .spellings = {"-t", "--tee"},
       .kind = FlagKind::valued,
       .default_value = "0",
       .env_var = "PET_TEE",
       .metavar = "STD",
       .group = g,
       .help = "Tee std streams into log files and the console, same syntax as --redirects."},
      {.dest = flag::k_local_ranks_filter,
       .spellings = {"--local-ranks-filter", "--local_ranks_filter"},
       .kind = FlagKind::valued,
       .env_var = "PET_LOCAL_RANKS_FILTER",
       .metavar = "RANKS",
       .group = g,
       .help = "Comma-separated local ranks whose output reaches the console, e.g. 0,1; files keep "
               "everything."},
      {.dest = flag::k_logs_specs,
       .spellings = {"--logs-specs", "--logs_specs"},
       .kind = FlagKind::valued,
       .metavar = "NAME",
       .group = g,
       .help = "torchrun.logs_specs entry point for a custom log layout; ddprun accepts only the "
               "built-in one: default, or empty. Not read from PET_."},
      {.dest = flag::k_duplicate_stdout_filters,
       .spellings = {"--duplicate-stdout-filters", "--duplicate_stdout_filters"},
       .kind = FlagKind::valued,
       .env_var = "PET_DUPLICATE_STDOUT_FILTERS",
       .metavar = "FILTERS",
       .group = g,
       .help = "torch 2.10's copy of matching stdout lines to a second file: accepted and "
               "ignored with a warning (use --tee and grep the log files)."},
      {.dest = flag::k_duplicate_stderr_filters,
       .spellings = {"--duplicate-stderr-filters", "--duplicate_stderr_filters"},
       .kind = FlagKind::valued,
       .env_var = "PET_DUPLICATE_STDERR_FILTERS",
       .metavar = "FILTERS",
       .group = g,
       .help = "As --duplicate-stdout-filters, for stderr: accepted and ignored with a warning."},
  };
}

}  // namespace

std::vector<FlagSpec> logging_flags() {
  auto flags = supervision_flags();
  append(flags, output_flags());
  return flags;
}

}  // namespace ddprun::cli::detail
