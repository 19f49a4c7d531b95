#pragma once
// The agent's Prometheus metrics (issue 41 §3): what the supervisor's hooks and the
// rendezvous' observers report, folded into counters, gauges and one histogram, and rendered
// in Prometheus' text exposition format (version 0.0.4) with the run id, node and role as
// labels on every sample. Pure: the caller passes the time and the live figures (the health
// snapshot, the agent's CPU and memory) at each scrape; metrics_hooks.hpp wires it.

#include "ddprun/agent/health.hpp"
#include "ddprun/util/clock.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::agent {

/// Why a round of workers ended other than in success, as the `cause` label says it.
enum class RoundCause {
  exit_code,   ///< a worker exited non-zero
  signal,      ///< a worker was killed by a signal
  stall,       ///< --stall-timeout: no progress
  file_timer,  ///< a worker's file timer (torch's FileTimerClient) ran out
  unhealthy,   ///< this node failed its health checks
  lost_node,   ///< the membership changed: a node was lost, left out, or joined
  peer_failed  ///< another node's group failed
};

std::string_view to_string(RoundCause cause);

struct MetricLabels {
  std::string run_id;
  std::string node;
  std::string role;
};

/// What is read at each scrape rather than counted.
struct LiveFigures {
  HealthSnapshot health;
  bool spare_waiting = false;  ///< this agent stands by as a spare
  double cpu_seconds = 0;      ///< the agent's own user + system CPU
  std::uint64_t resident_bytes = 0;
  double start_time_seconds = 0;  ///< the agent's start, seconds since the Unix epoch
};

class Metrics {
 public:
  /// Upper bounds of the join-duration histogram's buckets, in seconds (+Inf is implied).
  static constexpr std::array<double, 10> k_join_buckets{0.05, 0.1, 0.25, 0.5, 1,
                                                         2.5,  5,   10,   30,  60};

  Metrics(const MetricLabels& labels, util::SteadyTime started);

  /// A round ended for `cause`; `restarting` when the group starts again.
  void round_ended(RoundCause cause, bool restarting);
  /// The agent starts to join a round (after a round ended and it restarts).
  void joining(util::SteadyTime now);
  /// The round's workers started: the join since joining() is observed.
  void joined(util::SteadyTime now, std::int64_t rendezvous_round);
  /// A node was left out of the job (this one or another, as this agent learned it).
  void node_left_out() { ++nodes_left_out_; }
  /// The stall timeout in force and its basis: "set" (--stall-timeout S), "startup" (auto's
  /// start-up bound), "learned" (auto), or "off" (0).
  void stall_timeout(std::chrono::milliseconds timeout, std::string_view basis);

  /// The exposition text.
  std::string render(const LiveFigures& live) const;

 private:
  std::string labels(std::string_view extra = {}) const;

  std::string base_labels_;
  std::map<RoundCause, std::uint64_t> restarts_;
  std::map<RoundCause, std::uint64_t> failed_rounds_;
  std::optional<util::SteadyTime> joining_since_;
  std::array<std::uint64_t, k_join_buckets.size()> join_buckets_{};
  std::uint64_t join_count_ = 0;
  double join_sum_ = 0;
  std::int64_t rendezvous_round_ = -1;
  std::uint64_t nodes_left_out_ = 0;
  double stall_timeout_s_ = 0;
  std::string stall_basis_ = "off";
};

/// A label value as the text format wants it: backslash, double quote and newline escaped.
std::string escape_label_value(std::string_view value);

}  // namespace ddprun::agent
