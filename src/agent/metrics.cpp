// Metrics: counting and the text exposition format (prometheus.io/docs/instrumenting/
// exposition_formats): one `# HELP` and `# TYPE` line per family, then its samples, every one
// with the agent's labels. Every cause of a labelled counter is written from the start (0),
// so that rate() and increase() see a series before its first increment.

#include "ddprun/agent/metrics.hpp"

#include <fmt/format.h>

namespace ddprun::agent {

namespace {

constexpr std::array<RoundCause, 7> k_causes{
    RoundCause::exit_code, RoundCause::signal,    RoundCause::stall,      RoundCause::file_timer,
    RoundCause::unhealthy, RoundCause::lost_node, RoundCause::peer_failed};
constexpr std::array<GroupPhase, 4> k_phases{GroupPhase::rendezvous, GroupPhase::running,
                                             GroupPhase::stopping, GroupPhase::finished};

void family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

void sample(std::string& out, std::string_view name, const std::string& labels, double value) {
  fmt::format_to(std::back_inserter(out), "{}{{{}}} {}\n", name, labels, value);
}

std::uint64_t count_of(const std::map<RoundCause, std::uint64_t>& counts, RoundCause c) {
  auto it = counts.find(c);
  return it == counts.end() ? 0 : it->second;
}

}  // namespace

std::string_view to_string(RoundCause cause) {
  switch (cause) {
    case RoundCause::exit_code:
      return "exit_code";
    case RoundCause::signal:
      return "signal";
    case RoundCause::stall:
      return "stall";
    case RoundCause::file_timer:
      return "file_timer";
    case RoundCause::unhealthy:
      return "unhealthy";
    case RoundCause::lost_node:
      return "lost_node";
    case RoundCause::peer_failed:
      return "peer_failed";
  }
  return "unknown";
}

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

Metrics::Metrics(const MetricLabels& labels, util::SteadyTime started)
    : base_labels_(fmt::format("run_id=\"{}\",node=\"{}\",role=\"{}\"",
                               escape_label_value(labels.run_id), escape_label_value(labels.node),
                               escape_label_value(labels.role))),
      joining_since_(started) {}

void Metrics::round_ended(RoundCause cause, bool restarting) {
  ++failed_rounds_[cause];
  if (restarting) {
    ++restarts_[cause];
  }
}

void Metrics::joining(util::SteadyTime now) { joining_since_ = now; }

void Metrics::joined(util::SteadyTime now, std::int64_t rendezvous_round) {
  rendezvous_round_ = rendezvous_round;
  if (!joining_since_) {
    return;  // a second start without a new join (not expected): nothing to time
  }
  const double s = std::chrono::duration<double>(now - *joining_since_).count();
  joining_since_.reset();
  ++join_count_;
  join_sum_ += s;
  for (std::size_t i = 0; i < k_join_buckets.size(); ++i) {
    if (s <= k_join_buckets[i]) {
      ++join_buckets_[i];
    }
  }
}

void Metrics::stall_timeout(std::chrono::milliseconds timeout, std::string_view basis) {
  stall_timeout_s_ = std::chrono::duration<double>(timeout).count();
  stall_basis_ = escape_label_value(basis);
}

std::string Metrics::labels(std::string_view extra) const {
  return extra.empty() ? base_labels_ : base_labels_ + "," + std::string(extra);
}

std::string Metrics::render(const LiveFigures& live) const {
  std::string out;
  family(out, "ddprun_workers_running", "gauge", "This node's workers still running.");
  sample(out, "ddprun_workers_running", labels(), live.health.workers_running);
  family(out, "ddprun_restarts_total", "counter",
         "Worker group restarts, by what ended the round before.");
  for (auto c : k_causes) {
    sample(out, "ddprun_restarts_total", labels(fmt::format("cause=\"{}\"", to_string(c))),
           static_cast<double>(count_of(restarts_, c)));
  }
  family(out, "ddprun_failed_rounds_total", "counter",
         "Rounds of workers that ended other than in success, restarted or not, by cause.");
  for (auto c : k_causes) {
    sample(out, "ddprun_failed_rounds_total", labels(fmt::format("cause=\"{}\"", to_string(c))),
           static_cast<double>(count_of(failed_rounds_, c)));
  }
  family(out, "ddprun_worker_group_attempt", "gauge",
         "The current worker group's TORCHELASTIC_RESTART_COUNT.");
  sample(out, "ddprun_worker_group_attempt", labels(), live.health.round);
  if (rendezvous_round_ >= 0) {
    family(out, "ddprun_rendezvous_round", "gauge", "The rendezvous round the workers run in.");
    sample(out, "ddprun_rendezvous_round", labels(), static_cast<double>(rendezvous_round_));
  }
  family(out, "ddprun_state", "gauge", "Where the worker group is: 1 for the current state.");
  for (auto p : k_phases) {
    sample(out, "ddprun_state", labels(fmt::format("state=\"{}\"", to_string(p))),
           live.health.state == to_string(p) ? 1 : 0);
  }
  if (live.health.seconds_since_progress) {
    family(out, "ddprun_seconds_since_progress", "gauge",
           "Seconds since the workers' last output or file-timer request (while they run).");
    sample(out, "ddprun_seconds_since_progress", labels(), *live.health.seconds_since_progress);
  }
  family(out, "ddprun_stall_timeout_seconds", "gauge",
         "The stall timeout in force: set, auto's start-up bound, learned, or 0 (off).");
  sample(out, "ddprun_stall_timeout_seconds", labels(fmt::format("basis=\"{}\"", stall_basis_)),
         stall_timeout_s_);
  family(out, "ddprun_rendezvous_join_seconds", "histogram",
         "From starting to join a round (the agent's start, or the previous round's end) to "
         "its workers' start.");
  for (std::size_t i = 0; i < k_join_buckets.size(); ++i) {
    sample(out, "ddprun_rendezvous_join_seconds_bucket",
           labels(fmt::format("le=\"{}\"", k_join_buckets[i])),
           static_cast<double>(join_buckets_[i]));
  }
  sample(out, "ddprun_rendezvous_join_seconds_bucket", labels("le=\"+Inf\""),
         static_cast<double>(join_count_));
  sample(out, "ddprun_rendezvous_join_seconds_sum", labels(), join_sum_);
  sample(out, "ddprun_rendezvous_join_seconds_count", labels(), static_cast<double>(join_count_));
  family(out, "ddprun_spare_waiting", "gauge", "1 while this agent stands by as a spare.");
  sample(out, "ddprun_spare_waiting", labels(), live.spare_waiting ? 1 : 0);
  family(out, "ddprun_nodes_left_out_total", "counter",
         "Nodes left out of the job (crash loops, health checks), as this agent learned them.");
  sample(out, "ddprun_nodes_left_out_total", labels(), static_cast<double>(nodes_left_out_));
  family(out, "process_cpu_seconds_total", "counter", "The agent's user and system CPU time.");
  sample(out, "process_cpu_seconds_total", labels(), live.cpu_seconds);
  family(out, "process_resident_memory_bytes", "gauge", "The agent's resident memory.");
  sample(out, "process_resident_memory_bytes", labels(), static_cast<double>(live.resident_bytes));
  family(out, "process_start_time_seconds", "gauge",
         "The agent's start, in seconds since the Unix epoch.");
  sample(out, "process_start_time_seconds", labels(), live.start_time_seconds);
  return out;
}

}  // namespace ddprun::agent
