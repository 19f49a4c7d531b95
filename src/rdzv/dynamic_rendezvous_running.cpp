// DynamicRendezvous while workers run and at job end: watch() (the header and the round's stacks
// request, plus the heartbeat of the one member this node watches), failure reports, the leave op,
// the MASTER_ADDR/PORT exchange, the exit barrier and the close op.

#include "ddprun/rdzv/crash_loop.hpp"
#include "ddprun/rdzv/dynamic_rendezvous.hpp"
#include "ddprun/rdzv/waits.hpp"

#include <spdlog/spdlog.h>

namespace ddprun::rdzv {
namespace {

/// How often leave() checks whether the join it ended has returned.
constexpr std::chrono::milliseconds k_ops_poll{20};

}  // namespace

void DynamicRendezvous::stop() {
  stop_watch();
  keep_alive_.stop();
}

void DynamicRendezvous::stop_watch() {
  ++watch_generation_;
  watch_timer_.cancel();
}

asio::awaitable<RunSignal> DynamicRendezvous::watch() {
  auto keep = shared_from_this();
  const int generation = ++watch_generation_;
  if (!last_round_) {
    co_return RunSignal::none;
  }
  std::optional<WallMs> failing_since;  ///< when the current run of failed syncs began
  std::optional<WallMs> watched_beat;   ///< the watched member's last heartbeat read
  const int members = last_round_->assignment.group_world_size;
  for (bool first = true;; first = false) {
    std::optional<std::chrono::milliseconds> until_silent;
    if (watched_beat) {
      until_silent = std::chrono::milliseconds(*watched_beat + keep_alive_bound(settings_).count() -
                                               wall_now());
    }
    auto wait = watch_wait(settings_, kv_.watches_changes(), first, failing_since.has_value(),
                           members, until_silent);
    if (first && !kv_.watches_changes()) {  // a round's nodes start together: spread their looks
      wait = std::chrono::milliseconds(
          static_cast<std::int64_t>(static_cast<double>(wait.count()) * random_.unit()));
    }
    watch_timer_.expires_after(wait);
    auto wake = wake_set();
    co_await kv_.wait_for_change(std::move(wake), watch_timer_);  // woken or timed out: look
    if (generation != watch_generation_) {
      co_return RunSignal::none;
    }
    const RunSignal signal = co_await watch_once(failing_since, watched_beat);
    if (generation != watch_generation_) {
      co_return RunSignal::none;
    }
    if (signal != RunSignal::none) {
      co_return signal;
    }
  }
}

// What ends a wait between two running looks on a store that watches: a change of the
// header or the stacks request, the removal of the watched heartbeat (its lease ran out);
// not its writes: it is judged by its time, at the look made when it would turn silent
// (watch_wait).
WatchSet DynamicRendezvous::wake_set() const {
  WatchSet set{{key_, stacks_request_key(settings_.run_id, last_round_->round)}, {}};
  if (const std::string& watched = last_round_->assignment.watch_id; !watched.empty()) {
    set.removals.push_back(heartbeat_key(settings_.run_id, watched));
  }
  return set;
}

// What a running look reads: the header, the round's stacks request and the watched
// member's heartbeat.
std::vector<std::string> DynamicRendezvous::watched_keys() const {
  auto set = wake_set();
  set.changes.insert(set.changes.end(), set.removals.begin(), set.removals.end());
  return std::move(set.changes);
}

// One look: the header, the round's stacks request and the watched member's heartbeat, in one
// request. A silent member ends the round for everyone (it is "lost"), found at the first look
// after the keep-alive bound (every watch_interval on the store; on etcd the look made when
// the heartbeat it last read turns silent, so at the bound itself, or the one its removal with
// the member's lease wakes, whichever comes first); another member's stacks request is raised
// once, when nothing ends the round. Reading the heartbeat only every keep_alive_interval saved
// one key of each read and cost up to a whole interval in noticing a lost node; on etcd a look
// woken by each of its writes was 0.2 requests a node a second, and found a silent member up to
// an interval after the bound (issue #28).
asio::awaitable<RunSignal> DynamicRendezvous::watch_once(std::optional<WallMs>& failing_since,
                                                         std::optional<WallMs>& watched_beat) {
  const int round = last_round_->round;
  const std::string watched = last_round_->assignment.watch_id;
  const bool ring = !watched.empty();
  auto keys = watched_keys();
  auto got = co_await kv_.multi_get_now(keys);
  const WallMs now = wall_now();
  if (!got) {
    // Since the failure, not since the call: a call that timed out because this agent was
    // stopped (SIGSTOP) says nothing about the store.
    failing_since = failing_since.value_or(now);
    if (decide_store_unreachable(failing_since, now, settings_) == RunSignal::store_lost) {
      spdlog::error("{}", render_store_lost(settings_, *failing_since, now, got.error().message));
      co_return RunSignal::store_lost;
    }
    spdlog::warn("rendezvous {}: watching round {}: {}", settings_.run_id, round,
                 got.error().message);
    co_return RunSignal::none;
  }
  failing_since.reset();
  auto h = got->at(0).empty() ? Result<RoundHeader>(RoundHeader{}) : decode_header(got->at(0));
  if (!h) {
    spdlog::warn("rendezvous {}: watching round {}: {}", settings_.run_id, round,
                 h.error().message);
    co_return RunSignal::none;
  }
  note_exclusions(*h);
  RunSignal signal = decide_while_running(*h, self_, round, settings_);
  if (signal == RunSignal::none && ring) {
    watched_beat = parse_heartbeat(got->at(2));
    if (is_silent(watched_beat, now, settings_)) {
      h = co_await update([&](const RoundHeader& c) {
        return with_next_round(c, round, Phase::complete, {}, {watched});
      });
      if (!h) {
        spdlog::warn("rendezvous {}: could not report {} as lost: {}", settings_.run_id, watched,
                     h.error().message);
        co_return RunSignal::none;
      }
      signal = decide_while_running(*h, self_, round, settings_);
    }
  }
  if (signal != RunSignal::none) {
    // A peer's failure is a failure of this job: said at the default level, as this node's own.
    spdlog::log(signal == RunSignal::peer_failed ? spdlog::level::warn : spdlog::level::info, "{}",
                render_signal(signal, *h, self_, round, settings_));
    co_return signal;
  }
  co_return stacks_.signal(round, got->at(1));
}

asio::awaitable<Result<void>> DynamicRendezvous::leave(std::chrono::milliseconds bound) {
  auto keep = shared_from_this();
  stop();
  leaving_ = true;        // a join in progress must not go on after this node left
  kv_.interrupt_waits();  // ... and must not sit out join_block on its rank key
  join_pause_.cancel();   // ... nor a pause after a failed step
  const auto deadline = wall_now() + bound.count();
  while (ops_running_ > 0) {
    if (wall_now() > deadline) {
      co_return make_error(ErrorCode::timeout, "rendezvous " + settings_.run_id +
                                                   ": an operation in progress did not end");
    }
    co_await store_.sleep(k_ops_poll);
  }
  while (wall_now() <= deadline) {
    auto h = co_await read_header();
    if (!h) {
      co_return h.error();
    }
    const RoundHeader& c = h->value;
    const bool my_slot = join_.slot > 0 && join_.slot_round == c.round && join_.slot <= c.size;
    if (!c.closed && c.phase == Phase::closing && my_slot) {
      co_await store_.sleep(settings_.poll_interval);  // a close caught this node: see how it ends
      continue;
    }
    const bool ran = last_round_ && c.round == last_round_->round;
    const bool member =
        !c.closed && c.phase == Phase::complete && (ran || (my_slot && co_await slot_won(c.round)));
    if (!member) {
      co_return co_await withdraw();  // joining or waiting: take back the slot or the count
    }
    const int round = c.round;
    const std::string me = self_.id();
    auto bumped = co_await update(
        [&](const RoundHeader& x) { return with_next_round(x, round, Phase::complete, {me}, {}); },
        deadline);
    co_return bumped ? Result<void>{} : Result<void>(bumped.error());
  }
  co_return make_error(ErrorCode::timeout, "rendezvous " + settings_.run_id +
                                               ": could not leave within " +
                                               std::to_string(bound.count()) + " ms");
}

asio::awaitable<bool> DynamicRendezvous::slot_won(int round) {
  auto text = co_await store_.read_one(rank_key(settings_.run_id, round, join_.slot));
  if (!text || text->empty()) {
    co_return false;
  }
  auto a = decode_assignment(*text);
  co_return a && a->member;
}

asio::awaitable<Result<CrashStreak>> DynamicRendezvous::report_failure(FailedRound report) {
  auto keep = shared_from_this();
  if (!last_round_) {
    co_return CrashStreak{};
  }
  report.round = last_round_->round;
  report.reporter = self_.id();
  auto record = [&](const RoundHeader& c) -> std::optional<RoundHeader> {
    auto n = with_failure(c, report);
    if (n) {
      if (auto stopped = with_crash_loop_stop(*n, settings_)) {
        return stopped;
      }
    }
    return n;
  };
  auto done = co_await update(record, wall_now() + settings_.read_timeout.count());
  if (!done) {
    co_return make_error(done.error().code,
                         "rendezvous " + settings_.run_id +
                             ": could not report the failure: " + done.error().message);
  }
  co_return done->streak;
}

asio::awaitable<Result<MasterEndpoint>> DynamicRendezvous::exchange_master(
    RoundResult round, std::optional<MasterEndpoint> mine) {
  auto keep = shared_from_this();
  co_return co_await rdzv::exchange_master(store_, settings_, std::move(round), std::move(mine));
}

asio::awaitable<Result<void>> DynamicRendezvous::exit_barrier(std::chrono::milliseconds timeout) {
  auto keep = shared_from_this();
  if (!last_round_) {
    co_return Result<void>{};
  }
  co_return co_await rdzv::exit_barrier(store_, settings_, *last_round_, timeout);
}

asio::awaitable<Result<void>> DynamicRendezvous::shutdown(bool finished) {
  auto keep = shared_from_this();
  stop();
  auto end =
      co_await update([&](const RoundHeader& c) { return with_closed(c, finished, wall_now()); },
                      wall_now() + settings_.close_timeout.count());
  if (!end) {
    spdlog::warn("rendezvous {}: closing failed: {}", settings_.run_id, end.error().message);
    co_return end.error();
  }
  co_return Result<void>{};
}

}  // namespace ddprun::rdzv
