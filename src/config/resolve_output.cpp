// config::resolve's output part (resolver.hpp): the workers' streams (-r, -t,
// --local-ranks-filter, --line-output), the log directory, the events file and the log level.

#include "ddprun/config/launch_config.hpp"
#include "ddprun/output/std_spec.hpp"
#include "ddprun/util/strings.hpp"

#include <map>
#include <set>

#include "resolver.hpp"

namespace ddprun::config::detail {

namespace {
constexpr int k_max_port = 65535;
}  // namespace

// -r, -t and --local-ranks-filter, checked here so that a bad value stops the launch before
// anything (a fan-out included) is started.
Result<void> Resolver::worker_output() {
  for (auto [dest, spec] : {std::pair{flag::k_redirects, &cfg_.output.redirects},
                            std::pair{flag::k_tee, &cfg_.output.tee}}) {
    auto parsed = output::parse_std_spec(text(dest), dest.name());
    if (!parsed) {
      return bad(dest, "0-3 or a per-rank map such as 0:1,1:2 (local ranks 0-9)");
    }
    *spec = std::move(*parsed);
    note(dest, text(dest));
  }
  auto filter = output::parse_local_ranks_filter(text(flag::k_local_ranks_filter));
  if (!filter) {
    return bad(flag::k_local_ranks_filter, "a comma-separated list of local ranks such as 0,1");
  }
  cfg_.output.local_ranks_filter = std::move(*filter);
  note(flag::k_local_ranks_filter, text(flag::k_local_ranks_filter));
  static const std::map<std::string, LineOutput, std::less<>> line_modes{
      {"auto", LineOutput::automatic}, {"on", LineOutput::on}, {"off", LineOutput::off}};
  auto mode = line_modes.find(text(flag::k_line_output));
  if (mode == line_modes.end()) {
    return bad(flag::k_line_output, choices_text(flag::k_line_output));
  }
  cfg_.output.line_output = mode->second;
  note(flag::k_line_output, text(flag::k_line_output));
  for (auto dest : {flag::k_duplicate_stdout_filters, flag::k_duplicate_stderr_filters}) {
    if (!text(dest).empty()) {
      warn(dest, quoted(text(dest)) +
                     ": ignored, ddprun does not write torch's filtered_std*.log copies "
                     "(tee the streams with -t and grep the log files)");
    }
  }
  return {};
}

Result<void> Resolver::logging() {
  cfg_.output.log_dir = text(flag::k_log_dir);
  note(flag::k_log_dir,
       cfg_.output.log_dir.empty() ? "(a new torchelastic_* directory)" : cfg_.output.log_dir,
       origin_of(flag::k_log_dir));
  if (auto r = worker_output(); !r) {
    return r;
  }
  cfg_.output.events_file = text(flag::k_events_file);
  note(flag::k_events_file, cfg_.output.events_file);
  if (!text(flag::k_metrics_port).empty()) {
    auto port = int_in(flag::k_metrics_port, 0, k_max_port, "a port number 0-65535");
    if (!port) {
      return port.error();
    }
    cfg_.output.metrics_port = *port;
  }
  note(flag::k_metrics_port, text(flag::k_metrics_port));
  const std::string level =
      text(flag::k_log_level).empty() ? "info" : util::to_lower(text(flag::k_log_level));
  static const std::map<std::string, LogLevel, std::less<>> levels{
      {"trace", LogLevel::trace},       {"debug", LogLevel::debug},  {"info", LogLevel::info},
      {"warning", LogLevel::warning},   {"warn", LogLevel::warning}, {"error", LogLevel::error},
      {"critical", LogLevel::critical}, {"off", LogLevel::off}};
  auto it = levels.find(level);
  if (it == levels.end()) {
    return bad(flag::k_log_level, "one of debug, info, warning, error, critical, off");
  }
  cfg_.log_level = it->second;
  note(flag::k_log_level, level);
  // torch >= 2.2 registers its built-in layout under the name "default".
  if (!text(flag::k_logs_specs).empty() && text(flag::k_logs_specs) != "default") {
    return bad(flag::k_logs_specs,
               "default or nothing: custom Python log specs cannot be loaded by ddprun");
  }
  cfg_.event_log_handler = text(flag::k_event_log_handler);
  static const std::set<std::string> handlers{"null", "console", "dynamic_rendezvous"};
  if (handlers.count(cfg_.event_log_handler) == 0) {
    return bad(flag::k_event_log_handler, "null, console or dynamic_rendezvous");
  }
  note(flag::k_event_log_handler, cfg_.event_log_handler);
  return {};
}

}  // namespace ddprun::config::detail
