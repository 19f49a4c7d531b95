#pragma once
// Hot spares, as pure functions. Nodes beyond --nnodes MAX join the wait list of the running
// round (decide_join), so the header counts them (RoundHeader::waiting) and `ddprun status`
// lists them. A spare standing by waits as long as the round runs: its join_timeout counts
// from when that round ends. When a round fails or a member is lost or leaves, the round ends
// for every member; the spares take slots in the next round with the survivors, so the job
// keeps its size. With a spare waiting, a node that keeps failing may be left out even of a
// fixed-size job (decide_exclusion counts FailedRound::spares). The spare that becomes a
// member reports whose place it took and why (SpareJoined).

#include "ddprun/rdzv/decide.hpp"
#include "ddprun/rdzv/settings.hpp"
#include "ddprun/rdzv/state.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ddprun::rdzv {

/// Whether a joining node is a spare standing by: counted on the wait list of a complete
/// round that has no room for it, or that left nodes standing by for want of a whole segment.
bool is_standing_by(const RoundHeader& h, const JoinView& v, const RdzvSettings& settings);

/// The join deadline after looking at `h`: a spare standing by keeps a full join_timeout
/// ahead of it; any other node keeps v.join_deadline.
WallMs join_deadline_after(const RoundHeader& h, const JoinView& v, const RdzvSettings& settings);

/// Whether a place in the joining round `h` is known to be free: the round before ended because
/// members left or were lost, or a node was left out since `v`'s node began waiting.
bool is_place_free(const RoundHeader& h, const JoinView& v);

/// A spare without a slot in the joining round `h`: when it may take one, or nullopt for now.
/// It lets the previous members come back first (settings.spare_grace from when it saw the
/// round), unless a place is known to be free. nullopt for a node that is no spare.
std::optional<WallMs> spare_entry(const RoundHeader& h, const JoinView& v,
                                  const RdzvSettings& settings);

/// "rendezvous 'job' round 3 is running with 2 nodes, as many as --nnodes allows: this node
/// stands by as one of 1 spare(s) and takes a place when a node fails, is left out or is lost"
std::string render_standing_by(const RoundHeader& h, const RdzvSettings& settings);

/// A member of the round a spare waited for that is not in the round the spare joined.
struct Replaced {
  std::string node;  ///< NodeDesc::id()
  std::string why;   ///< "left out: <reason>", "lost", "left", "not in round <r>"
  bool operator==(const Replaced&) const = default;
};

/// A spare became a member: whose places the new round's newcomers took.
struct SpareJoined {
  std::string spare;  ///< this node's id
  int waited_round = 0;
  int round = 0;
  std::vector<Replaced> replaced;
  /// With --segment: the segment it filled (its group rank / the segment size) and its domain
  /// (domain_text); -1 without segments.
  int segment = -1;
  std::string domain{};
  bool operator==(const SpareJoined&) const = default;
};

/// The members of `before` (the round the spare waited for) missing from `after` (the round it
/// joined), each with why, as the header `h` of the joined round tells it: its exclusions, and
/// `ended` when it is about the round just before.
SpareJoined spare_joined(const NodeDesc& self, int waited_round, int round,
                         const std::vector<NodeDesc>& before, const std::vector<NodeDesc>& after,
                         const RoundHeader& h);

/// "spare X joins round 4 of rendezvous 'job' in place of Y (left out: ...), Z (lost)"; "...
/// joins round 4 ... (no member of round 3 is missing)" when it only filled room; with a
/// segment, "...; it fills segment 1 (domain A)".
std::string render_spare_joined(const SpareJoined& s, const RdzvSettings& settings);

}  // namespace ddprun::rdzv
