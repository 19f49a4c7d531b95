#pragma once
// `ddprun status` rendering (pure): what was read of a rendezvous and the wall-clock time of
// the reading, turned into a human table or a JSON document. The I/O lives in status/command.hpp.

#include "ddprun/rdzv/state.hpp"

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace ddprun::status {

/// One reading of a rendezvous.
struct Snapshot {
  rdzv::RoundHeader header;
  /// Complete round: its members in group-rank order. Otherwise the nodes that have joined
  /// the round so far (withdrawn slots left out), in rank_before order.
  std::vector<rdzv::NodeDesc> nodes;
  std::map<std::string, rdzv::WallMs> heartbeats;  ///< by NodeDesc::id()
  /// When each node's workers last made progress, by NodeDesc::id(); a node that knows none
  /// (or whose agent does not say) is absent.
  std::map<std::string, rdzv::WallMs> progress;
  /// The stall timeout each node applies now, by NodeDesc::id(): only nodes under
  /// --stall-timeout auto say it (rdzv/stall_figures.hpp).
  std::map<std::string, std::chrono::milliseconds> stall_timeouts;
};

/// "3.2s ago" for a heartbeat at `then` seen at `now` (milliseconds since the epoch); a
/// heartbeat from the future (clock skew between machines) reads "0.0s ago".
std::string render_age(rdzv::WallMs then, rdzv::WallMs now);
/// "42s ago", "5m07s ago", "2h05m ago" (whole units, rounded down) for the workers' last
/// progress at `then`; "0s ago" for a time in the future.
std::string render_elapsed(rdzv::WallMs then, rdzv::WallMs now);

/// The table: a summary line (round, phase, open/closed), the last reported failure and the
/// last membership change, then the nodes in group-rank order with address, pid, nproc, role,
/// heartbeat age and how long ago their workers last made progress ("-": unknown), a STALL
/// TIMEOUT column when a node says its learned one (--stall-timeout auto), and the waiting
/// nodes. Ends with a newline.
std::string render_status_table(const Snapshot& snap, rdzv::WallMs now);

/// The same facts as one JSON object (one line, sorted keys), heartbeat and progress ages and
/// the learned stall timeout (`stall_timeout_s`, null unless learned) in seconds.
std::string render_status_json(const Snapshot& snap, rdzv::WallMs now);

}  // namespace ddprun::status
