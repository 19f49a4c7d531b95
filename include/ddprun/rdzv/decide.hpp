#pragma once
// The dynamic rendezvous as pure functions (spec §4.6, house style §19.10): given the small
// shared header, what this node holds and the time, decide the next step; header changes are
// pure functions too. The executor (dynamic_rendezvous.hpp) does the store I/O around them.

#include "ddprun/rdzv/run_signal.hpp"
#include "ddprun/rdzv/settings.hpp"
#include "ddprun/rdzv/state.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace ddprun::rdzv {

/// The next step of a joining node.
enum class JoinStep {
  take_slot,          ///< ADD the round's slot counter, then write the node and its heartbeat
  set_deadline,       ///< start the last call: min nodes are in
  claim,              ///< close the round: this node assigns the ranks
  await_assignment,   ///< block on this node's rank key until `until`: the close's outcome
  wait,               ///< nothing to do until `until`
  join_wait_list,     ///< the round runs without this node: wait for the next one, counted
  end_previous,       ///< this node ran the header's round: end it, so a new one begins
  abort_stale_close,  ///< the closer went silent mid-close: start the round over
  error_closed,
  error_timeout,  ///< join_timeout passed (withdraw the slot, then report)
};

std::string to_string(JoinStep s);

/// What a joining node knows besides the header.
struct JoinView {
  int slot = 0;                  ///< this node's slot, 0 for none
  int slot_round = -1;           ///< the round `slot` belongs to
  int waiting_round = -1;        ///< the round whose wait list counts this node
  std::optional<int> ran_round;  ///< the round this node last ran as a member
  WallMs now = 0;
  WallMs join_deadline = 0;
  bool spare = false;        ///< it stood by as a spare in waiting_round (spares.hpp)
  WallMs round_seen_at = 0;  ///< when it first saw the header's round
};

struct JoinDecision {
  JoinStep step = JoinStep::wait;
  WallMs until = 0;  ///< wait: when to look again
};

/// How long a closer may hold the header in `closing` before the others start over.
std::chrono::milliseconds stale_close_bound(const RdzvSettings& settings);

JoinDecision decide_join(const RoundHeader& h, const JoinView& v, const RdzvSettings& settings);

// --- Header transitions: nullopt when the change no longer applies (someone moved first). ---

std::optional<RoundHeader> with_deadline(const RoundHeader& h, int round, WallMs now,
                                         const RdzvSettings& settings);
/// joining → closing, by `closer`, for slots 1..size.
std::optional<RoundHeader> with_claim(const RoundHeader& h, int round, int size,
                                      const std::string& closer, WallMs now);
/// A round ends and the next begins (joining, empty). `left`/`lost` say why, when known.
std::optional<RoundHeader> with_next_round(const RoundHeader& h, int round, Phase from,
                                           const std::vector<std::string>& left,
                                           const std::vector<std::string>& lost);
std::optional<RoundHeader> with_waiting(const RoundHeader& h, int round, const std::string& id,
                                        int delta);
/// Records `report` as its round's failure (the round must be the header's, complete) and its
/// reporter as that round's root cause; a later report of the same round replaces it only
/// when its failure came earlier (the header may have moved on meanwhile).
std::optional<RoundHeader> with_failure(const RoundHeader& h, const FailedRound& report);
/// Closes the run at `now`; `finished`: by a node whose workers succeeded (the job finished),
/// which a node that comes back after the end reads (run_end.hpp). The first close stands.
std::optional<RoundHeader> with_closed(const RoundHeader& h, bool finished, WallMs now);

// --- Closing a round ---

/// What the closer read for one slot: "" where nothing is stored (or the slot was withdrawn).
struct SlotRead {
  std::string node;       ///< encode_node text
  std::string heartbeat;  ///< wall ms as text
};

/// The closer's decision for slots 1..reads.size().
struct ClosePlan {
  bool complete = false;                ///< false: not enough live nodes, the round keeps joining
  bool keep_deadline = false;           ///< with !complete: min nodes are still in
  int live = 0;                         ///< slots with a node and a recent heartbeat
  int missing = 0;                      ///< slots taken and never written (yet)
  std::vector<NodeDesc> members;        ///< group-rank order
  std::vector<Assignment> assignments;  ///< per slot, index 0 = slot 1
  int workers = 0;
  int segment = 0;    ///< the run's --segment (0: none)
  int standby = 0;    ///< live nodes in no whole segment (rank_order.hpp), left standing by
  std::string error;  ///< the round cannot run (two static nodes with one --node-rank)
};

ClosePlan plan_close(const std::vector<SlotRead>& reads, const RoundHeader& h, WallMs now,
                     const RdzvSettings& settings);

/// The closed header: complete with the plan's facts.
std::optional<RoundHeader> with_complete(const RoundHeader& h, int round, const std::string& closer,
                                         const ClosePlan& plan);
/// A claim that found too few nodes goes back to joining; with MIN live nodes the last call
/// runs (it starts now when none was set), so the round closes without waiting for a newcomer.
std::optional<RoundHeader> with_abort(const RoundHeader& h, int round, const std::string& closer,
                                      const ClosePlan& plan, WallMs now,
                                      const RdzvSettings& settings);

// --- While workers run ---

/// What a node whose workers run in `round` must do: closed first, then a peer's failure
/// report for this round, then the round having ended (a member left or was lost), then nodes
/// waiting while there is room.
RunSignal decide_while_running(const RoundHeader& h, const NodeDesc& self, int round,
                               const RdzvSettings& settings);

/// Whether the member a node watches is silent: no heartbeat, or one older than the bound.
bool is_silent(const std::optional<WallMs>& heartbeat, WallMs now, const RdzvSettings& settings);

/// Whether a running node must give up on the store: `failing_since` is when the current run of
/// failed syncs began (nullopt: the last sync succeeded). The store is lost once it has failed
/// for the keep-alive bound, the silence after which the store drops a node as dead.
RunSignal decide_store_unreachable(std::optional<WallMs> failing_since, WallMs now,
                                   const RdzvSettings& settings);

/// How long to wait after losing `lost_in_a_row` (>= 1) compare-and-sets of the header to other
/// nodes: `unit_random` (in [0, 1)) of a window that doubles from 2 ms up to `cap`, so that
/// many contenders stop retrying in lockstep.
std::chrono::milliseconds contention_backoff(int lost_in_a_row, std::chrono::milliseconds cap,
                                             double unit_random);

// --- Messages ---

/// Names for a list of nodes: the addresses when they are distinct, else the full ids.
std::string render_node_names(const std::vector<NodeDesc>& nodes);
/// Ids as given, cut at k_max_named_ids with "... and N more" when `total` is larger.
std::string render_ids(const std::vector<std::string>& ids, int total);

/// "rendezvous <id> round <r>: 3/4 nodes (a, b, c), waiting up to <t>s for more"; `arrived`
/// holds up to k_max_named_ids of the `live` nodes.
std::string render_progress(const RoundHeader& h, int live, const std::vector<NodeDesc>& arrived,
                            WallMs now, WallMs join_deadline, const RdzvSettings& settings);

/// The node indices in [0, expected) that no node of `arrived` holds: the static backend's
/// missing --node_rank values.
std::vector<int> missing_node_indices(int expected, const std::vector<NodeDesc>& arrived);

/// When the first WARNING about an incomplete join (or a store that never answered) is due:
/// incomplete_warning_after, at most half the join_timeout.
std::chrono::milliseconds first_incomplete_warning(const RdzvSettings& settings);

/// Whether the progress line of a join that began at `join_started` and is still short of
/// min_nodes should be a WARNING now: the first at incomplete_warning_after (at most half the
/// join_timeout), then one per incomplete_warning_interval after `last_warning`.
bool is_incomplete_warning_due(WallMs join_started, std::optional<WallMs> last_warning, WallMs now,
                               const RdzvSettings& settings);

/// "rendezvous <id> round <r> is incomplete after 10s: 1/2 nodes arrived (a); missing
/// --node_rank 1; waiting up to <t>s more", then settings.incomplete_hint's lines, indented,
/// when `with_hint`.
/// `arrived` holds up to k_max_named_ids of the `live` nodes.
std::string render_incomplete(const RoundHeader& h, int live, const std::vector<NodeDesc>& arrived,
                              WallMs join_started, WallMs now, WallMs join_deadline,
                              const RdzvSettings& settings, bool with_hint);

/// Before the store ever answered: "rendezvous <id>: no rendezvous store answers at
/// <endpoint> after 10s; waiting up to <t>s more", then settings.incomplete_hint's lines,
/// indented, when `with_hint`.
std::string render_store_unanswered(const RdzvSettings& settings, const std::string& endpoint,
                                    WallMs waited, WallMs left, bool with_hint);

/// The join timeout error naming who was expected and who arrived (`live` nodes, `arrived` up
/// to k_max_named_ids of them, self included); `previous` (the members this node ran with
/// last, possibly empty) names the nodes that were lost.
std::string render_timeout(const RoundHeader& h, const RdzvSettings& settings, int live,
                           const std::vector<NodeDesc>& arrived,
                           const std::vector<NodeDesc>& previous);

/// Why watch() of `self` ends the running `round`, for the log: who left (the leave op), who
/// was lost (found dead), who waits, or that `self` itself was dropped.
std::string render_signal(RunSignal signal, const RoundHeader& h, const NodeDesc& self, int round,
                          const RdzvSettings& settings);

/// The error of a node that gives up on the store after failing to reach it since
/// `failing_since`; `last_error` is the store client's message (it names the endpoint).
std::string render_store_lost(const RdzvSettings& settings, WallMs failing_since, WallMs now,
                              const std::string& last_error);

/// The error a node gets when the run is already closed.
std::string render_closed(const RdzvSettings& settings);

}  // namespace ddprun::rdzv
