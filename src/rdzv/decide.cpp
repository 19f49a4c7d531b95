// The dynamic rendezvous algorithm (spec §4.6), as pure functions, shaped for thousands of
// nodes: no node reads or writes O(nodes) bytes except the one that closes a round.
//
// A round goes: joining (each node takes a slot with ADD on the round's counter and writes its
// description and a heartbeat under that slot; the node whose slot number reaches min starts
// the last call; the node whose slot reaches max, or any node once the last call is over,
// claims the close) → closing (the closer reads slots 1..size, leaves out withdrawn and silent
// ones, orders the rest by rank_before, writes each slot's Assignment and the members list)
// → complete (ranks fixed; late nodes are counted on the wait list) → the next round begins
// when a member ends it: with_next_round() on a failure restart, a leave, a member found dead
// by the node watching it, or nodes waiting while there is room.
//
// Only the small header is changed by compare-and-set; every transition here returns nullopt
// when the header has moved on, so a node that lost a race simply decides again. Slot numbers
// only grow within a round, so a claim that found too few live nodes records how far it
// checked (`checked`) and only a newcomer beyond that claims again: no claim livelock.
//
// ddprun deviations from torch: ranks follow rank_before() (endpoint host first) instead of
// (addr, pid); failures are broadcast with `failed_round`; a dead member of a running round is
// a membership change for the survivors (torch issue #111646), found by the member before it
// in group-rank order; an agent stopped by a signal leaves (recorded in `ended.left`); and a
// running node that cannot reach the store for the keep-alive bound gives up.

#include "ddprun/rdzv/decide.hpp"

#include "ddprun/rdzv/crash_loop.hpp"
#include "ddprun/rdzv/spares.hpp"

#include <algorithm>

namespace ddprun::rdzv {
namespace {

/// The first slots of a round, and the first ones from MIN (the node that set the last-call
/// deadline and those that raced it, awake when it was set), wake at the deadline to claim the
/// close; the others only every join_block, so thousands of nodes do not all race for it. The
/// first slots alone are not enough: they were blocked for join_block before the deadline
/// existed, so a last call shorter than join_block would wait for join_block.
constexpr int k_deadline_watchers = 3;

bool watches_deadline(int mine, const RdzvSettings& settings) {
  return mine <= k_deadline_watchers ||
         (mine >= settings.min_nodes && mine < settings.min_nodes + k_deadline_watchers);
}

void push_capped(std::vector<std::string>& ids, const std::string& id) {
  if (ids.size() < k_max_named_ids) {
    ids.push_back(id);
  }
}

std::vector<std::string> capped(std::vector<std::string> ids) {
  if (ids.size() > k_max_named_ids) {
    ids.resize(k_max_named_ids);
  }
  return ids;
}

JoinDecision wait_until(WallMs until) { return {JoinStep::wait, until}; }

JoinDecision decide_joining(const RoundHeader& h, int mine, const JoinView& v,
                            const RdzvSettings& settings) {
  if (mine == 0) {
    if (auto until = spare_entry(h, v, settings)) {
      return wait_until(*until);  // the previous members first
    }
    return {JoinStep::take_slot, 0};
  }
  if (h.deadline && v.now >= *h.deadline) {
    return {JoinStep::claim, 0};
  }
  if (mine >= settings.max_nodes && mine > h.checked) {
    return {JoinStep::claim, 0};
  }
  if (mine >= settings.min_nodes && !h.deadline && mine > h.checked) {
    return {JoinStep::set_deadline, 0};
  }
  WallMs until = std::min(v.join_deadline + 1, v.now + settings.join_block.count());
  if (h.deadline && watches_deadline(mine, settings)) {
    until = std::min(until, *h.deadline);  // the others look after join_block, as a fallback
  }
  return {JoinStep::await_assignment, until};
}

}  // namespace

std::string to_string(JoinStep s) {
  switch (s) {
    case JoinStep::take_slot:
      return "take_slot";
    case JoinStep::set_deadline:
      return "set_deadline";
    case JoinStep::claim:
      return "claim";
    case JoinStep::await_assignment:
      return "await_assignment";
    case JoinStep::wait:
      return "wait";
    case JoinStep::join_wait_list:
      return "join_wait_list";
    case JoinStep::end_previous:
      return "end_previous";
    case JoinStep::abort_stale_close:
      return "abort_stale_close";
    case JoinStep::error_closed:
      return "error_closed";
    case JoinStep::error_timeout:
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
    case RunSignal::stacks_requested:
      return "stacks_requested";
  }
  return "unknown";
}

std::chrono::milliseconds stale_close_bound(const RdzvSettings& settings) {
  return keep_alive_bound(settings);
}

JoinDecision decide_join(const RoundHeader& h, const JoinView& v, const RdzvSettings& settings) {
  if (h.closed) {
    return {JoinStep::error_closed, 0};
  }
  if (v.now > v.join_deadline) {
    return {JoinStep::error_timeout, 0};
  }
  if (v.ran_round && *v.ran_round == h.round && h.phase == Phase::complete) {
    return {JoinStep::end_previous, 0};
  }
  const int mine = v.slot_round == h.round ? v.slot : 0;
  switch (h.phase) {
    case Phase::joining:
      return decide_joining(h, mine, v, settings);
    case Phase::closing: {
      const WallMs stale_at = h.closing_since + stale_close_bound(settings).count();
      if (v.now > stale_at) {
        return {JoinStep::abort_stale_close, 0};
      }
      if (mine > 0 && mine <= h.size) {
        return {JoinStep::await_assignment,
                std::min(stale_at + 1, v.now + settings.join_block.count())};
      }
      return wait_until(v.now + settings.poll_interval.count());
    }
    case Phase::complete:
      if (mine > 0 && mine <= h.size) {
        return {JoinStep::await_assignment, v.now + settings.read_timeout.count()};
      }
      if (v.waiting_round != h.round) {  // counted: a late joiner, or a spare (spares.hpp)
        return {JoinStep::join_wait_list, 0};
      }
      return wait_until(v.now + settings.poll_interval.count());
  }
  return wait_until(v.now + settings.poll_interval.count());
}

std::optional<RoundHeader> with_deadline(const RoundHeader& h, int round, WallMs now,
                                         const RdzvSettings& settings) {
  if (h.closed || h.round != round || h.phase != Phase::joining || h.deadline) {
    return std::nullopt;
  }
  RoundHeader n = h;
  n.deadline = now + settings.last_call_timeout.count();
  return n;
}

std::optional<RoundHeader> with_claim(const RoundHeader& h, int round, int size,
                                      const std::string& closer, WallMs now) {
  if (h.closed || h.round != round || h.phase != Phase::joining) {
    return std::nullopt;
  }
  RoundHeader n = h;
  n.phase = Phase::closing;
  n.size = size;
  n.closer = closer;
  n.closing_since = now;
  return n;
}

std::optional<RoundHeader> with_next_round(const RoundHeader& h, int round, Phase from,
                                           const std::vector<std::string>& left,
                                           const std::vector<std::string>& lost) {
  if (h.closed || h.round != round || h.phase != from) {
    return std::nullopt;
  }
  RoundHeader n;
  n.round = round + 1;
  n.failed_round = h.failed_round;
  n.causes = h.causes;
  n.excluded = h.excluded;
  n.failures = h.failures;
  n.streak = h.streak;
  n.streak_before = h.streak_before;
  n.ended = RoundEnd{round, capped(left), capped(lost)};
  return n;
}

std::optional<RoundHeader> with_waiting(const RoundHeader& h, int round, const std::string& id,
                                        int delta) {
  if (h.closed || h.round != round || (delta > 0 && h.phase == Phase::joining)) {
    return std::nullopt;
  }
  RoundHeader n = h;
  auto& ids = n.waiting_ids;
  const auto at = std::find(ids.begin(), ids.end(), id);
  if (delta > 0) {
    if (at != ids.end()) {
      return std::nullopt;  // counted already
    }
    n.waiting += delta;
    push_capped(ids, id);
    return n;
  }
  if (h.waiting == 0) {
    return std::nullopt;
  }
  n.waiting = std::max(0, h.waiting + delta);
  n.standby = std::min(n.standby, n.waiting);
  if (at != ids.end()) {
    ids.erase(at);
  }
  return n;
}

std::optional<RoundHeader> with_failure(const RoundHeader& h, const FailedRound& report) {
  if (h.closed) {
    return std::nullopt;
  }
  RoundHeader n = h;
  if (h.failed_round && h.failed_round->round == report.round) {
    // Another node reported this round first: the earlier failure is the root cause.
    if (report.at >= h.failed_round->at || report.reporter == h.failed_round->reporter) {
      return std::nullopt;
    }
    n.failed_round = report;
    n.failed_round->spares = h.failed_round->spares;  // counted when the round failed
    n.streak = next_streak(h.streak_before, report);
    if (!n.causes.empty()) {
      n.causes.back() = report.reporter;
    }
    return n;
  }
  if (h.round != report.round || h.phase != Phase::complete) {
    return std::nullopt;
  }
  n.failed_round = report;
  n.failed_round->spares = h.waiting;
  ++n.failures;
  n.streak_before = h.streak;
  n.streak = next_streak(h.streak, report);
  if (n.causes.size() >= k_max_named_ids) {
    n.causes.erase(n.causes.begin());
  }
  n.causes.push_back(report.reporter);
  return n;
}

std::optional<RoundHeader> with_closed(const RoundHeader& h, bool finished, WallMs now) {
  if (h.closed) {
    return std::nullopt;
  }
  RoundHeader n = h;
  n.closed = true;
  n.closed_at = now;
  n.finished = finished;
  return n;
}

std::optional<RoundHeader> with_complete(const RoundHeader& h, int round, const std::string& closer,
                                         const ClosePlan& plan) {
  if (h.closed || h.round != round || h.phase != Phase::closing || h.closer != closer) {
    return std::nullopt;
  }
  RoundHeader n = h;
  n.phase = Phase::complete;
  n.deadline.reset();
  n.closer.clear();
  n.members = static_cast<int>(plan.members.size());
  n.workers = plan.workers;
  n.error = plan.error;
  n.segment = plan.segment;
  n.standby = plan.standby;
  return n;
}

std::optional<RoundHeader> with_abort(const RoundHeader& h, int round, const std::string& closer,
                                      const ClosePlan& plan, WallMs now,
                                      const RdzvSettings& settings) {
  if (h.closed || h.round != round || h.phase != Phase::closing || h.closer != closer) {
    return std::nullopt;
  }
  RoundHeader n = h;
  n.phase = Phase::joining;
  // A slot still being written may yet count: then the same slots may claim again.
  n.checked = plan.missing > 0 ? h.checked : h.size;
  n.size = 0;
  n.closer.clear();
  n.closing_since = 0;
  if (!plan.keep_deadline) {
    n.deadline.reset();
  } else if (!n.deadline) {
    n.deadline = now + settings.last_call_timeout.count();
  }
  return n;
}

RunSignal decide_while_running(const RoundHeader& h, const NodeDesc& self, int round,
                               const RdzvSettings& settings) {
  if (h.closed) {
    return RunSignal::closed;
  }
  if (h.failed_round && h.failed_round->round == round && h.failed_round->reporter != self.id()) {
    return RunSignal::peer_failed;
  }
  if (h.round != round) {
    return RunSignal::membership_changed;
  }
  if (h.waiting > h.standby && h.members < settings.max_nodes) {
    return RunSignal::membership_changed;
  }
  return RunSignal::none;
}

bool is_silent(const std::optional<WallMs>& heartbeat, WallMs now, const RdzvSettings& settings) {
  return !heartbeat || now - *heartbeat > keep_alive_bound(settings).count();
}

RunSignal decide_store_unreachable(std::optional<WallMs> failing_since, WallMs now,
                                   const RdzvSettings& settings) {
  if (failing_since && now - *failing_since >= keep_alive_bound(settings).count()) {
    return RunSignal::store_lost;
  }
  return RunSignal::none;
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
