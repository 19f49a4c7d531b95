#pragma once
// The shared records of one rendezvous run (spec §4.4, our own encoding, built to scale to
// thousands of nodes). No record holds every node except the members list, which one node
// writes once per round:
//
//   ddprun/rdzv/<id>/state           RoundHeader: small JSON changed only by compare-and-set
//   ddprun/rdzv/<id>/<r>/slots       join counter of round r (ADD): a joining node's slot
//   ddprun/rdzv/<id>/<r>/slot/<s>    the NodeDesc of slot s ("-" + it once withdrawn)
//   ddprun/rdzv/<id>/<r>/gone        how many slots of round r were withdrawn (ADD)
//   ddprun/rdzv/<id>/<r>/rank/<s>    what slot s got when round r closed (Assignment)
//   ddprun/rdzv/<id>/<r>/members/<p> the members of round r in group-rank order, in parts
//   ddprun/rdzv/<id>/<r>/stacks      the round's standing StacksRequest (JSON, stacks.hpp)
//   ddprun/rdzv/<id>/<r>/stacks/<q>/<g>  group rank g's answer to request q (opaque text)
//   ddprun/rdzv/<id>/hb/<node id>    the node's last keep-alive (wall ms)
//   ddprun/rdzv/<id>/progress/<node id>  when its workers last made progress (wall ms, or
//                                    "-": unknown), written with each keep-alive
//
// Several machines read and write these, so times are wall-clock milliseconds since the epoch.

#include "ddprun/util/result.hpp"

#include <cstdint>
#include <optional>
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
  /// Where the scheduler's topology puts the node (SLURM_TOPOLOGY_ADDR without the node's own
  /// name: "s0.s4", "b8"); "" when unknown. Infrastructure order before node_index.
  std::string topology{};
  /// The node's NVLink/placement domain (rank_order.hpp); "" for a node alone.
  std::string domain{};
  int last_round = -1;  ///< the latest round this node ran as a member, -1 for none
  int last_rank = -1;   ///< its group rank in last_round

  /// torch's printing and our key: "addr_pid_localid".
  std::string id() const;
  bool operator==(const NodeDesc&) const = default;
};

/// A stable order for listing nodes: the endpoint host first, then nodes with a scheduler index
/// (ascending), then by addr, pid, local_id. Group ranks follow rank_order.hpp instead.
bool rank_before(const NodeDesc& a, const NodeDesc& b);

/// A node reported that its worker group failed in `round`. When several nodes report the
/// same round, the report with the earliest failure time stands: that node is the root cause
/// (torchrun's first-failure rule, across nodes), the others failed because of it.
struct FailedRound {
  int round = 0;
  std::string reporter;  ///< NodeDesc::id()
  WallMs at = 0;         ///< when its first worker failed or it found the group stalled
  std::string reason;    ///< "rank 3 failed (exitcode: 1)", "... stalled ...": for messages
  /// How it failed, for telling a repeated failure (crash_loop.hpp): the root-cause rank, its
  /// exit code or signal and its last error line.
  std::string signature{};
  bool quick = false;  ///< the attempt failed before it made progress (--crash-loop-window)
  /// Spares waiting when the round failed (RoundHeader::waiting, set by with_failure): nodes
  /// that can take the place of one left out, so even a fixed-size job may leave one out.
  int spares = 0;
  bool operator==(const FailedRound&) const = default;
};

/// The latest failed rounds that failed the same way before making progress, in a row.
struct CrashStreak {
  std::string signature;  ///< FailedRound::signature they share
  int count = 0;          ///< 0: the latest failure made progress
  /// When its k_hinted_crash_loop_limit-th failure happened (crash_loop.hpp; 0: not reached):
  /// where that limit would have stopped the job, for the hint shown while the stop is off.
  WallMs hinted_stop_at = 0;
  bool operator==(const CrashStreak&) const = default;
};

/// A node left out of the job because it was the root cause of `failures` failed rounds in a
/// row (--rdzv-conf max_node_failures).
struct Exclusion {
  std::string node;  ///< NodeDesc::id()
  int round = 0;     ///< the last round it failed
  int failures = 0;
  std::string reason;  ///< its last failure's reason
  bool operator==(const Exclusion&) const = default;
};

/// Why the previous round ended when it ended for a membership reason: nodes that left on
/// purpose (the leave op of an agent stopped by a signal) or were found dead by a peer.
struct RoundEnd {
  int round = -1;
  std::vector<std::string> left;  ///< NodeDesc::id(), at most k_max_named_ids
  std::vector<std::string> lost;
  bool operator==(const RoundEnd&) const = default;
};

/// Id lists in the header are cut at this length (the count stays exact where it matters).
inline constexpr std::size_t k_max_named_ids = 32;

enum class Phase { joining, closing, complete };

/// The small shared record: which round, in which phase, and the few facts every node polls.
struct RoundHeader {
  int round = 0;
  Phase phase = Phase::joining;
  std::optional<WallMs> deadline;  ///< joining: the last call ends here (set once min joined)
  int checked = 0;           ///< joining: slots 1..checked were too few when a close was tried
  int size = 0;              ///< closing/complete: slots 1..size belong to the round
  std::string closer;        ///< closing: the node assigning ranks
  WallMs closing_since = 0;  ///< closing: when it began
  int members = 0;           ///< complete: group world size
  int workers = 0;           ///< complete: total workers
  std::string error;         ///< complete: the round cannot run (duplicate static rank)
  bool closed = false;
  WallMs closed_at = 0;   ///< closed: when (0: a header written before it was recorded)
  bool finished = false;  ///< closed: by a node whose workers succeeded (the job finished)
  std::optional<FailedRound> failed_round;  ///< the latest failed round's root cause
  /// The root causes (reporter ids) of the latest failed rounds, oldest first, at most
  /// k_max_named_ids; the last is failed_round's. Cleared when a node is excluded.
  std::vector<std::string> causes;
  std::vector<Exclusion> excluded;  ///< nodes left out of the job, at most k_max_named_ids
  /// Failed rounds so far: the job's restart count (TORCHELASTIC_RESTART_COUNT of the next
  /// round), the same on every node however late it joined.
  int failures = 0;
  CrashStreak streak;         ///< up to and including failed_round
  CrashStreak streak_before;  ///< before failed_round (a report of the same round replaces it)
  /// closed: why the run stopped before the job ended ("" when it finished or was shut down):
  /// a crash loop; every node exits with k_exit_do_not_requeue and this text.
  std::string stop_reason;
  /// Nodes waiting for the next round: late joiners while there is room, spares (spares.hpp)
  /// while the round is full.
  int waiting = 0;
  std::vector<std::string> waiting_ids;  ///< the first k_max_named_ids of them
  RoundEnd ended;                        ///< why round `round - 1` ended, when known
  int segment = 0;  ///< complete: --segment of the run (0: none), for `ddprun status`
  /// complete: nodes the close left standing by because they made no whole segment; they are
  /// on the wait list, so only waiting nodes beyond them are worth a new round.
  int standby = 0;
  bool operator==(const RoundHeader&) const = default;
};

/// What one slot got when its round closed: a member's ranks, or why it is not a member.
struct Assignment {
  bool member = false;
  /// non-member: "late", "withdrawn", "silent" (no recent keep-alive), "standby" (no whole
  /// segment for it, rank_order.hpp)
  std::string why;
  int group_rank = 0;
  int group_world_size = 0;
  int worker_base = 0;      ///< global rank of this node's local rank 0
  int world_size = 0;       ///< workers in the round
  int role_base = 0;        ///< role rank of local rank 0
  int role_world_size = 0;  ///< workers of this node's role
  std::string watch_id;     ///< the member this one watches (group rank + 1, cyclic)
  std::string error;        ///< member: the round cannot run (two static nodes, one rank)
  bool operator==(const Assignment&) const = default;
};

/// Keys (or pairs) per MULTI_GET / MULTI_SET: well inside the store's request and reply limits.
inline constexpr std::size_t k_keys_per_request = 1024;

std::string state_key(const std::string& run_id);
/// "ddprun/rdzv/<id>/host": set by the agent hosting the store as soon as it listens, so an
/// agent trying a job's derived ports knows it found this run's store, not a foreign service.
std::string host_marker_key(const std::string& run_id);
/// Prefix of per-round keys: "ddprun/rdzv/<id>/<round>/".
std::string round_prefix(const std::string& run_id, int round);
std::string slots_key(const std::string& run_id, int round);
std::string slot_key(const std::string& run_id, int round, int slot);
/// The keys of slots 1..count of a round.
std::vector<std::string> slot_keys(const std::string& run_id, int round, int count);
std::string gone_key(const std::string& run_id, int round);
std::string rank_key(const std::string& run_id, int round, int slot);
std::string heartbeat_key(const std::string& run_id, const std::string& node_id);
/// "ddprun/rdzv/<id>/progress/<node id>": written in the same request as the heartbeat.
std::string progress_key(const std::string& run_id, const std::string& node_id);
/// "ddprun/rdzv/<id>/<r>/stacks": the round's standing request for the workers' stacks.
std::string stacks_request_key(const std::string& run_id, int round);
/// "ddprun/rdzv/<id>/<r>/stacks/<seq>/<group rank>": that member's answer to request `seq`.
std::string stacks_answer_key(const std::string& run_id, int round, int seq, int group_rank);

/// Deterministic JSON, so equal values encode to equal bytes (the header's fencing token).
std::string encode_header(const RoundHeader& header);
/// Parses encode_header's output; anything else is a protocol error naming what is wrong.
Result<RoundHeader> decode_header(std::string_view text);
std::string encode_node(const NodeDesc& node);
Result<NodeDesc> decode_node(std::string_view text);
/// A withdrawn slot keeps its node, marked: "-" + encode_node().
std::string encode_withdrawn(const NodeDesc& node);
bool is_withdrawn(std::string_view slot_text);
/// The node of a slot's text, withdrawn or not; an error for "" (nothing written yet).
Result<NodeDesc> decode_slot(std::string_view slot_text);
std::string encode_assignment(const Assignment& a);
Result<Assignment> decode_assignment(std::string_view text);
std::string encode_members(const std::vector<NodeDesc>& members);
Result<std::vector<NodeDesc>> decode_members(std::string_view text);

std::string to_string(Phase p);

/// Parses a heartbeat value (wall ms as decimal text); "" or anything else: none.
std::optional<WallMs> parse_heartbeat(const std::string& text);
/// A progress value: wall ms, or k_progress_unknown when the node knows none.
std::string render_progress_value(std::optional<WallMs> last_progress);
/// Parses render_progress_value's text; "", "-" or anything else: none.
std::optional<WallMs> parse_progress_value(const std::string& text);
inline constexpr const char* k_progress_unknown = "-";

}  // namespace ddprun::rdzv
