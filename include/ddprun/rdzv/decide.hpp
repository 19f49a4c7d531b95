#pragma once
// The dynamic rendezvous as pure functions (spec §4.6, house style §19.10): given the shared
// state, this node and the time, decide the next action; apply an action to get the next state.
// The executor (handler.hpp) does the store I/O around them.

#include "ddprun/rdzv/settings.hpp"
#include "ddprun/rdzv/state.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace ddprun::rdzv {

enum class Action {
  add_to_participants,
  add_to_wait_list,
  mark_complete,
  keep_alive,                ///< refresh own heartbeat
  wait,                      ///< nothing to write: sync again after poll_interval
  done,                      ///< the operation reached its goal
  remove_from_participants,  ///< exit op, or rollback after a join timeout
  remove_from_wait_list,     ///< rollback after a join timeout
  leave,                     ///< leave op: a stopping agent quits the round and says it left
  mark_closed,
  report_failure,
  error_closed,
  error_timeout,
};

std::string to_string(Action a);

/// What the running round must do, as seen by watch(). store_lost: the store has not answered
/// for longer than the keep-alive bound, so no round can be formed again.
enum class RunSignal { none, membership_changed, peer_failed, closed, store_lost };

std::string to_string(RunSignal s);

/// The join op: one step towards being a participant of a complete round. `join_deadline`
/// is when the whole join must have finished; past it the node rolls its entry back during
/// settings.rollback_grace, then gives up with error_timeout.
Action decide_join(const RdzvState& state, const NodeDesc& self, WallMs now, WallMs join_deadline,
                   const RdzvSettings& settings);

/// The exit op run before every join: leave the previous round's participants.
/// remove_from_participants, done (not a participant) or error_timeout (past `deadline`).
Action decide_exit(const RdzvState& state, const NodeDesc& self, WallMs now, WallMs deadline);

/// The leave op of an agent stopped by a signal: leave (it is a participant or waiting),
/// done (it is in neither) or error_timeout (past `deadline`).
Action decide_leave(const RdzvState& state, const NodeDesc& self, WallMs now, WallMs deadline);

/// The close op: mark_closed, done (already closed) or error_timeout (past `deadline`).
Action decide_close(const RdzvState& state, WallMs now, WallMs deadline);

/// Record that our group failed in `round`: report_failure, done (some node already reported
/// this round, or the run has moved past it) or error_timeout.
Action decide_report_failure(const RdzvState& state, int round, WallMs now, WallMs deadline);

/// The pure transition for `action` taken by `self` at `now`. Actions that change nothing
/// (wait, done, errors) return the state unchanged.
RdzvState apply(Action action, const RdzvState& state, const NodeDesc& self, WallMs now,
                const RdzvSettings& settings);

/// Result of dropping nodes whose heartbeat is older than keep_alive_interval × max_attempt.
struct Sanitized {
  RdzvState state;
  std::vector<NodeDesc> dropped;  ///< participants and wait-listed nodes that were removed
};

Sanitized sanitize(const RdzvState& state, WallMs now, const RdzvSettings& settings);

/// What a node whose workers run in `round` with `members` (the round's participants) must do.
/// closed first, then a peer's failure report for this round, then any change of membership:
/// the round moved on, a member left or was dropped as dead, or nodes wait and there is room.
RunSignal decide_while_running(const RdzvState& state, const NodeDesc& self, int round,
                               const std::vector<NodeDesc>& members, const RdzvSettings& settings);

/// Whether a running node must give up on the store: `failing_since` is when the current run of
/// failed syncs began (nullopt: the last sync succeeded). The store is lost once it has failed
/// for the keep-alive bound, the silence after which the store drops a node as dead.
RunSignal decide_store_unreachable(std::optional<WallMs> failing_since, WallMs now,
                                   const RdzvSettings& settings);

/// How long to wait after losing `lost_in_a_row` (>= 1) compare-and-sets of the state to other
/// nodes: `unit_random` (in [0, 1)) of a window that doubles from 2 ms up to `cap`, so that
/// many contenders stop retrying in lockstep (each retry moves the whole state).
std::chrono::milliseconds contention_backoff(int lost_in_a_row, std::chrono::milliseconds cap,
                                             double unit_random);

/// The participants of a state in rank order (by rank for a complete round, else rank_before).
std::vector<NodeDesc> ordered_participants(const RdzvState& state);

// --- Messages ---

/// Names for a list of nodes: the addresses when they are distinct, else the full ids.
std::string render_node_names(const std::vector<NodeDesc>& nodes);

/// "rendezvous <id> round <r>: 3/4 nodes (a, b, c), waiting up to <t>s for more"
std::string render_progress(const RdzvState& state, const NodeDesc& self, WallMs now,
                            WallMs join_deadline, const RdzvSettings& settings);

/// The join timeout error naming who was expected and who `arrived` (the nodes seen in the
/// round while waiting, self included); `previous` (the members of this node's last round,
/// possibly empty) names the nodes that were lost.
std::string render_timeout(const RdzvState& state, const RdzvSettings& settings,
                           const std::vector<NodeDesc>& arrived,
                           const std::vector<NodeDesc>& previous);

/// Why watch() of `self` ends the running `round` (members: the round's participants), for the
/// log: who left (the leave op), who was lost (dropped as dead), who waits, or that `self`
/// itself was dropped.
std::string render_signal(RunSignal signal, const RdzvState& state, const NodeDesc& self, int round,
                          const std::vector<NodeDesc>& members, const RdzvSettings& settings);

/// The error of a node that gives up on the store after failing to reach it since
/// `failing_since`; `last_error` is the store client's message (it names the endpoint).
std::string render_store_lost(const RdzvSettings& settings, WallMs failing_since, WallMs now,
                              const std::string& last_error);

/// The error a node gets when the run is already closed.
std::string render_closed(const RdzvSettings& settings);

}  // namespace ddprun::rdzv
