// JoinState: a joining node's bookkeeping between its looks (join_state.hpp).

#include "ddprun/rdzv/join_state.hpp"

#include "ddprun/rdzv/spares.hpp"

namespace ddprun::rdzv {

JoinView JoinState::view(std::optional<int> ran_round, WallMs now) const {
  JoinView v;
  v.slot = slot;
  v.slot_round = slot_round;
  v.waiting_round = waiting_round;
  v.ran_round = ran_round;
  v.now = now;
  v.join_deadline = deadline;
  v.spare = spare();
  v.round_seen_at = seen_round_at;
  return v;
}

void JoinState::note_header(const RoundHeader& h, std::optional<int> ran_round, WallMs now,
                            const RdzvSettings& settings) {
  if (h.round != seen_round) {
    seen_round = h.round;
    seen_round_at = now;
  }
  if (is_standing_by(h, view(ran_round, now), settings)) {
    stood_by_round = h.round;
  }
  deadline = join_deadline_after(h, view(ran_round, now), settings);
}

void JoinState::slot_written(int round) {
  slot = counted_slot;
  slot_round = round;
  counted_round = -1;
  counted_slot = 0;
}

void JoinState::forget_slot() {
  slot = 0;
  slot_round = -1;
}

void JoinState::joined() {
  forget_slot();
  waiting_round = -1;
  stood_by_round = -1;
}

}  // namespace ddprun::rdzv
