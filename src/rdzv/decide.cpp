// The dynamic rendezvous algorithm (spec §4.6), as pure functions.
//
// Every agent runs the same loop against one shared RdzvState: sync (read it, or write the
// state it computed with compare-and-set on the exact bytes it last read), sanitize (drop
// nodes whose heartbeat is too old), decide one action, apply it locally, write, repeat. A
// conflicting write just means another agent moved first; the loop waits a short random
// backoff (contention_backoff, so that hundreds of agents do not retry in lockstep), reads the
// state again and decides again, so every transition here must be correct from any state.
//
// A round goes: incomplete (nodes add themselves to `participants`; when the count reaches
// min a last-call deadline starts; at max, or once that deadline passed, the next participant
// to sync marks it complete and assigns ranks) → complete (ranks fixed; late nodes go on the
// wait list) → the next round begins when every participant has left again (the exit op that
// starts each next_round), which bumps `round`. Waiting nodes then join the new round.
//
// Races worth knowing: a participant can be dropped as dead by anyone's sanitize while it is
// merely slow; it then re-adds itself on its next sync. Before completion, a drop below min
// clears the deadline, so the last call restarts when min is reached again. A join past its
// deadline first rolls back its own entry (so it does not count towards a round it will not
// take part in), then reports the timeout.
//
// ddprun deviations from torch: ranks follow rank_before() (endpoint host first) instead of
// (addr, pid); failures are broadcast with `failed_round`; a dead member of a running round is
// a membership change for the survivors (torch issue #111646); an agent stopped by a signal
// leaves (the leave op, recorded in `left` so the survivors can say it left rather than was
// lost); and a running node that cannot reach the store for the keep-alive bound gives up.

#include "ddprun/rdzv/decide.hpp"

#include <algorithm>

namespace ddprun::rdzv {
namespace {

bool is_participant(const RdzvState& s, const NodeDesc& self) {
  return s.participants.count(self.id()) != 0;
}

bool is_waiting(const RdzvState& s, const NodeDesc& self) {
  return s.wait_list.count(self.id()) != 0;
}

int participant_count(const RdzvState& s) { return static_cast<int>(s.participants.size()); }

Action keep_alive_or_wait(const RdzvState& s, const NodeDesc& self, WallMs now,
                          const RdzvSettings& settings) {
  if (!is_participant(s, self) && !is_waiting(s, self)) {
    return Action::wait;
  }
  auto it = s.last_heartbeats.find(self.id());
  if (it == s.last_heartbeats.end() || now - it->second >= settings.keep_alive_interval.count()) {
    return Action::keep_alive;
  }
  return Action::wait;
}

Action decide_rollback(const RdzvState& s, const NodeDesc& self, WallMs now, WallMs join_deadline,
                       const RdzvSettings& settings) {
  if (now <= join_deadline + settings.rollback_grace.count()) {
    if (is_participant(s, self)) {
      return Action::remove_from_participants;
    }
    if (is_waiting(s, self)) {
      return Action::remove_from_wait_list;
    }
  }
  return Action::error_timeout;
}

Action decide_incomplete(const RdzvState& s, const NodeDesc& self, WallMs now,
                         const RdzvSettings& settings) {
  if (!is_participant(s, self)) {
    return Action::add_to_participants;
  }
  if (participant_count(s) >= settings.min_nodes && s.deadline && now >= *s.deadline) {
    return Action::mark_complete;
  }
  return keep_alive_or_wait(s, self, now, settings);
}

// Removing a participant may end a complete round (nobody left) or stop an incomplete
// round's last call (fewer than min).
void participant_removed_epilogue(RdzvState& s, const RdzvSettings& settings) {
  if (s.complete && s.participants.empty()) {
    s.round += 1;
    s.complete = false;
    s.deadline.reset();
    s.left.clear();
  } else if (!s.complete && participant_count(s) < settings.min_nodes) {
    s.deadline.reset();
  }
}

void mark_complete(RdzvState& s) {
  s.complete = true;
  s.deadline.reset();
  std::vector<NodeDesc> order;
  for (const auto& [id, p] : s.participants) {
    order.push_back(p.node);
  }
  std::sort(order.begin(), order.end(), rank_before);
  for (std::size_t i = 0; i < order.size(); ++i) {
    s.participants[order[i].id()].rank = static_cast<int>(i);
  }
}

void add_to_participants(RdzvState& s, const NodeDesc& self, WallMs now,
                         const RdzvSettings& settings) {
  s.wait_list.erase(self.id());
  s.participants[self.id()] = Participant{self, 0};
  s.last_heartbeats[self.id()] = now;
  if (participant_count(s) >= settings.min_nodes && !s.deadline) {
    s.deadline = now + settings.last_call_timeout.count();
  }
  if (participant_count(s) >= settings.max_nodes) {
    mark_complete(s);
  }
}

// The leave op: like the exit op, but a member of a complete round is recorded in `left`, so
// the survivors' watch() can say it left instead of calling it lost.
void leave(RdzvState& s, const NodeDesc& self, const RdzvSettings& settings) {
  s.wait_list.erase(self.id());
  s.last_heartbeats.erase(self.id());
  if (s.participants.erase(self.id()) == 0) {
    return;
  }
  if (s.complete) {
    s.left.insert(self.id());
  }
  participant_removed_epilogue(s, settings);
}

bool member_missing(const RdzvState& s, const std::vector<NodeDesc>& members) {
  return std::any_of(members.begin(), members.end(),
                     [&](const NodeDesc& n) { return s.participants.count(n.id()) == 0; });
}

}  // namespace

std::string to_string(Action a) {
  switch (a) {
    case Action::add_to_participants:
      return "add_to_participants";
    case Action::add_to_wait_list:
      return "add_to_wait_list";
    case Action::mark_complete:
      return "mark_complete";
    case Action::keep_alive:
      return "keep_alive";
    case Action::wait:
      return "wait";
    case Action::done:
      return "done";
    case Action::remove_from_participants:
      return "remove_from_participants";
    case Action::remove_from_wait_list:
      return "remove_from_wait_list";
    case Action::leave:
      return "leave";
    case Action::mark_closed:
      return "mark_closed";
    case Action::report_failure:
      return "report_failure";
    case Action::error_closed:
      return "error_closed";
    case Action::error_timeout:
      return "error_timeout";
  }
  return "unknown";
}

std::string to_string(RunSignal s) {
  switch (s) {
    case RunSignal::none:
      return "none";
    case RunSignal::membership_changed:
      return "membership_changed";
    case RunSignal::peer_failed:
      return "peer_failed";
    case RunSignal::closed:
      return "closed";
    case RunSignal::store_lost:
      return "store_lost";
  }
  return "unknown";
}

Action decide_join(const RdzvState& s, const NodeDesc& self, WallMs now, WallMs join_deadline,
                   const RdzvSettings& settings) {
  if (s.closed) {
    return Action::error_closed;
  }
  if (s.complete && is_participant(s, self)) {
    return Action::done;
  }
  if (now > join_deadline) {
    return decide_rollback(s, self, now, join_deadline, settings);
  }
  if (!s.complete) {
    return decide_incomplete(s, self, now, settings);
  }
  if (participant_count(s) < settings.max_nodes && !is_waiting(s, self)) {
    return Action::add_to_wait_list;
  }
  return keep_alive_or_wait(s, self, now, settings);
}

Action decide_exit(const RdzvState& s, const NodeDesc& self, WallMs now, WallMs deadline) {
  if (!is_participant(s, self)) {
    return Action::done;
  }
  return now > deadline ? Action::error_timeout : Action::remove_from_participants;
}

Action decide_leave(const RdzvState& s, const NodeDesc& self, WallMs now, WallMs deadline) {
  if (!is_participant(s, self) && !is_waiting(s, self)) {
    return Action::done;
  }
  return now > deadline ? Action::error_timeout : Action::leave;
}

Action decide_close(const RdzvState& s, WallMs now, WallMs deadline) {
  if (s.closed) {
    return Action::done;
  }
  return now > deadline ? Action::error_timeout : Action::mark_closed;
}

Action decide_report_failure(const RdzvState& s, int round, WallMs now, WallMs deadline) {
  // The first report of a round is enough: every peer restarts whoever reported it.
  if (s.round != round || s.closed || (s.failed_round && s.failed_round->round == round)) {
    return Action::done;
  }
  return now > deadline ? Action::error_timeout : Action::report_failure;
}

RdzvState apply(Action action, const RdzvState& state, const NodeDesc& self, WallMs now,
                const RdzvSettings& settings) {
  RdzvState s = state;
  switch (action) {
    case Action::add_to_participants:
      add_to_participants(s, self, now, settings);
      break;
    case Action::add_to_wait_list:
      s.wait_list[self.id()] = self;
      s.last_heartbeats[self.id()] = now;
      break;
    case Action::mark_complete:
      mark_complete(s);
      break;
    case Action::keep_alive:
      s.last_heartbeats[self.id()] = now;
      break;
    case Action::remove_from_participants:
      s.participants.erase(self.id());
      s.last_heartbeats.erase(self.id());
      participant_removed_epilogue(s, settings);
      break;
    case Action::remove_from_wait_list:
      s.wait_list.erase(self.id());
      s.last_heartbeats.erase(self.id());
      break;
    case Action::leave:
      leave(s, self, settings);
      break;
    case Action::mark_closed:
      s.closed = true;
      break;
    case Action::report_failure:
      s.failed_round = FailedRound{s.round, self.id()};
      break;
    case Action::wait:
    case Action::done:
    case Action::error_closed:
    case Action::error_timeout:
      break;
  }
  return s;
}

Sanitized sanitize(const RdzvState& state, WallMs now, const RdzvSettings& settings) {
  Sanitized out{state, {}};
  RdzvState& s = out.state;
  const WallMs cutoff = now - keep_alive_bound(settings).count();
  bool participant_dropped = false;
  for (const auto& [id, beat] : state.last_heartbeats) {
    if (beat >= cutoff) {
      continue;
    }
    s.last_heartbeats.erase(id);
    if (auto p = s.participants.find(id); p != s.participants.end()) {
      out.dropped.push_back(p->second.node);
      s.participants.erase(p);
      participant_dropped = true;
    }
    if (auto w = s.wait_list.find(id); w != s.wait_list.end()) {
      out.dropped.push_back(w->second);
      s.wait_list.erase(w);
    }
  }
  if (participant_dropped) {
    participant_removed_epilogue(s, settings);
  }
  return out;
}

RunSignal decide_while_running(const RdzvState& s, const NodeDesc& self, int round,
                               const std::vector<NodeDesc>& members, const RdzvSettings& settings) {
  if (s.closed) {
    return RunSignal::closed;
  }
  if (s.failed_round && s.failed_round->round == round && s.failed_round->reporter != self.id()) {
    return RunSignal::peer_failed;
  }
  if (s.round != round || member_missing(s, members)) {
    return RunSignal::membership_changed;
  }
  if (!s.wait_list.empty() && participant_count(s) < settings.max_nodes) {
    return RunSignal::membership_changed;
  }
  return RunSignal::none;
}

RunSignal decide_store_unreachable(std::optional<WallMs> failing_since, WallMs now,
                                   const RdzvSettings& settings) {
  if (failing_since && now - *failing_since >= keep_alive_bound(settings).count()) {
    return RunSignal::store_lost;
  }
  return RunSignal::none;
}

std::vector<NodeDesc> ordered_participants(const RdzvState& s) {
  std::vector<Participant> ps;
  for (const auto& [id, p] : s.participants) {
    ps.push_back(p);
  }
  std::sort(ps.begin(), ps.end(), [&](const Participant& a, const Participant& b) {
    return s.complete ? a.rank < b.rank : rank_before(a.node, b.node);
  });
  std::vector<NodeDesc> out;
  out.reserve(ps.size());
  for (const auto& p : ps) {
    out.push_back(p.node);
  }
  return out;
}

}  // namespace ddprun::rdzv

namespace ddprun::rdzv {

std::chrono::milliseconds contention_backoff(int lost_in_a_row, std::chrono::milliseconds cap,
                                             double unit_random) {
  constexpr std::chrono::milliseconds k_first_window{2};
  constexpr int k_max_doublings = 16;
  if (lost_in_a_row <= 0 || cap.count() <= 0) {
    return std::chrono::milliseconds{0};
  }
  const int doublings = std::min(lost_in_a_row - 1, k_max_doublings);
  const auto window = std::min(cap, k_first_window * (std::int64_t{1} << doublings));
  const double part = std::clamp(unit_random, 0.0, 1.0);
  return std::chrono::milliseconds(
      static_cast<std::int64_t>(part * static_cast<double>(window.count())));
}

}  // namespace ddprun::rdzv
