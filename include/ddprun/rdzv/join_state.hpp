#pragma once
// JoinState: what a joining node keeps between its looks at the header (its slot, the wait
// list it is on, whether it stands by as a spare, the join deadline), with the pure steps the
// executor applies to it. view() is what decide_join() reads.

#include "ddprun/rdzv/decide.hpp"
#include "ddprun/rdzv/settings.hpp"
#include "ddprun/rdzv/state.hpp"

#include <optional>

namespace ddprun::rdzv {

struct JoinState {
  int slot = 0;         ///< this node's slot in slot_round, 0 for none
  int slot_round = -1;  ///< the round `slot` belongs to
  /// A slot counted whose node could not be written yet: the join writes this one instead of
  /// counting another (a join that looks again after a failed write).
  int counted_round = -1;
  int counted_slot = 0;
  int waiting_round = -1;    ///< the round whose wait list counts this node
  int stood_by_round = -1;   ///< the round this node stood by in as a spare
  int seen_round = -1;       ///< the header's round when this node last read it
  WallMs seen_round_at = 0;  ///< when it first saw seen_round
  WallMs deadline = 0;       ///< when the join gives up (join_deadline_after may move it)

  /// It stood by as a spare on the wait list it is on.
  [[nodiscard]] bool spare() const {
    return stood_by_round >= 0 && stood_by_round == waiting_round;
  }
  /// The view decide_join() reads at `now`; `ran_round`: the round this node last ran in.
  [[nodiscard]] JoinView view(std::optional<int> ran_round, WallMs now) const;
  /// A header read while joining, at `now`: notes its round (a spare's grace counts from when
  /// it was first seen), whether this node stands by in it, and the deadline that follows.
  void note_header(const RoundHeader& h, std::optional<int> ran_round, WallMs now,
                   const RdzvSettings& settings);
  /// The slot counted for `round` is written: it is this node's.
  void slot_written(int round);
  /// The slot was given up, or its round closed without this node.
  void forget_slot();
  /// The join formed a round: slot, wait list and spare standing are forgotten.
  void joined();
};

}  // namespace ddprun::rdzv
