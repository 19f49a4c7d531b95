#pragma once
// The shared record of one rendezvous run (spec §4.4, our own JSON encoding). Several machines
// read and write it, so times are wall-clock milliseconds since the epoch.

#include "ddprun/util/result.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::rdzv {

/// Wall-clock milliseconds since the Unix epoch (system clock, shared between machines).
using WallMs = std::int64_t;

/// One agent: its identity (addr, pid, local_id, as torch's _NodeDesc) and what it brings to
/// a round (worker count, role) plus the facts that decide its group rank.
struct NodeDesc {
  std::string addr;
  std::int64_t pid = 0;
  int local_id = 0;
  int nproc = 1;  ///< local_world_size
  std::string role = "default";
  bool is_endpoint_host = false;  ///< this agent hosts the rendezvous endpoint's store
  std::optional<int> node_index;  ///< scheduler node index (SLURM_NODEID, ...) when known

  /// torch's printing and our map key: "addr_pid_localid".
  std::string id() const;
  bool operator==(const NodeDesc&) const = default;
};

/// Group-rank order: the endpoint host first, then nodes with a scheduler index (ascending),
/// then by addr, pid, local_id.
bool rank_before(const NodeDesc& a, const NodeDesc& b);

struct Participant {
  NodeDesc node;
  int rank = 0;  ///< 0 until the round completes
  bool operator==(const Participant&) const = default;
};

/// A node reported that its worker group failed in `round`.
struct FailedRound {
  int round = 0;
  std::string reporter;  ///< NodeDesc::id()
  bool operator==(const FailedRound&) const = default;
};

struct RdzvState {
  int round = 0;
  bool complete = false;
  std::optional<WallMs> deadline;  ///< last-call deadline of an incomplete round
  bool closed = false;
  std::map<std::string, Participant> participants;  ///< by NodeDesc::id()
  std::map<std::string, NodeDesc> wait_list;        ///< arrived after completion
  std::map<std::string, WallMs> last_heartbeats;
  std::optional<FailedRound> failed_round;
  /// Members of the current complete round that left it on purpose (the leave op of an agent
  /// stopped by a signal), so the survivors can tell "left" from "lost"; cleared when the
  /// round ends.
  std::set<std::string> left;
  bool operator==(const RdzvState&) const = default;
};

/// Store key of the state: deliberately not torch's "torch.rendezvous.<id>".
std::string state_key(const std::string& run_id);
/// "ddprun/rdzv/<id>/host": set by the agent hosting the store as soon as it listens, so an
/// agent trying a job's derived ports knows it found this run's store, not a foreign service.
std::string host_marker_key(const std::string& run_id);
/// Prefix of per-round keys: "ddprun/rdzv/<id>/<round>/".
std::string round_prefix(const std::string& run_id, int round);

/// Deterministic JSON (sorted keys), so equal states encode to equal bytes.
std::string encode_state(const RdzvState& state);
/// Parses encode_state's output; anything else is a protocol error naming what is wrong.
Result<RdzvState> decode_state(std::string_view text);

}  // namespace ddprun::rdzv
