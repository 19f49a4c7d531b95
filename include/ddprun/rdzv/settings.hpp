#pragma once
// Settings of the c10d-style dynamic rendezvous (spec §4.5): the --rdzv-conf timeouts with
// torchrun's defaults, plus ddprun's own polling cadence (not settable from --rdzv-conf).

#include "ddprun/util/result.hpp"

#include <chrono>
#include <map>
#include <string>

namespace ddprun::rdzv {

using namespace std::chrono_literals;

/// Everything the decision functions and the executor need to know about one run.
struct RdzvSettings {
  std::string run_id;
  int min_nodes = 1;
  int max_nodes = 1;
  std::chrono::milliseconds join_timeout{600s};
  std::chrono::milliseconds last_call_timeout{30s};
  std::chrono::milliseconds close_timeout{30s};
  std::chrono::milliseconds keep_alive_interval{5s};
  int keep_alive_max_attempt = 3;
  std::chrono::milliseconds heartbeat_timeout{5s};
  std::chrono::milliseconds read_timeout{60s};
  // ddprun's cadence (torch: 1 s polling); loopback/LAN and a cheap store allow faster.
  std::chrono::milliseconds poll_interval{150ms};       ///< between syncs while waiting to join
  std::chrono::milliseconds watch_interval{250ms};      ///< between syncs while workers run
  std::chrono::milliseconds first_round_jitter{300ms};  ///< random 0..this before round 0
  std::chrono::milliseconds progress_interval{5s};      ///< between "waiting for more" log lines
  std::chrono::milliseconds join_block{5s};  ///< longest wait on the rank key between looks
  /// A join still short of min_nodes logs its progress at WARNING once this long (or half the
  /// join_timeout, when shorter) after it began, with incomplete_hint, then every interval.
  std::chrono::milliseconds incomplete_warning_after{10s};
  std::chrono::milliseconds incomplete_warning_interval{60s};
  /// What the launch settings may have wrong and the flags that fix it (the app renders it),
  /// one sentence per line; messages print each line indented under their first line.
  std::string incomplete_hint;
  /// A node that was the root cause of this many failed rounds in a row is left out of the
  /// job when the others can go on without it (exclusion.hpp); 0: never.
  int max_node_failures = 2;
  /// How long a spare (spares.hpp) lets the previous round's members take their places in a
  /// new round before it takes a slot itself, unless a place is known to be free.
  std::chrono::milliseconds spare_grace{3s};
  /// This many failed rounds in a row that failed the same way before making progress close
  /// the run as a crash loop (crash_loop.hpp); 0: never. From --crash-loop-limit.
  int crash_loop_limit = 0;
  /// An attempt that fails within this long of its start made no progress (for the message;
  /// the reporting agent decides). From --crash-loop-window.
  std::chrono::milliseconds crash_loop_window{300s};
  /// The static backend: node_index is --node-rank and two members may not share one.
  bool unique_node_index = false;
  /// --segment: group ranks come in runs of this many nodes of one domain, and nodes that make
  /// no whole run stand by (rank_order.hpp); 0: no segments.
  int segment = 0;
};

/// keep_alive_interval × keep_alive_max_attempt: how long a node may stay silent before it is
/// dropped as dead, and how long a running node tolerates an unreachable store.
inline std::chrono::milliseconds keep_alive_bound(const RdzvSettings& s) {
  return s.keep_alive_interval * s.keep_alive_max_attempt;
}

/// Builds settings from parsed --rdzv-conf pairs and the --nnodes range. Values are whole
/// numbers of seconds (torch parses them with int()); non-positive values and an invalid
/// MIN:MAX range are errors with a one-line message. Keys other than the timing keys belong to
/// the store or the static backend and are skipped here (config::read_rdzv_conf decides which
/// keys reach this point and warns about the rest).
Result<RdzvSettings> parse_rdzv_settings(const std::map<std::string, std::string>& conf,
                                         const std::string& run_id, int min_nodes, int max_nodes);

}  // namespace ddprun::rdzv
