// DynamicRendezvous: store I/O around the pure decisions of decide.cpp, joining a round.
//
// next_round() loops: read the small header, decide_join(), take the step. Steps that change
// the header go through update(): compare-and-set against the exact bytes read, and after a
// lost race a short random backoff and a fresh read, until the change sticks or no longer
// applies. A waiting node blocks on its own rank key, so the closer's write wakes it at once
// without anyone polling. A node waiting for a running or closing round waits on the header
// through Kv::wait_for_change: a poll on c10d, a watch on etcd (waits.hpp).

#include "ddprun/rdzv/dynamic_rendezvous.hpp"

#include "ddprun/rdzv/etcd_layout.hpp"
#include "ddprun/rdzv/header_update.hpp"
#include "ddprun/rdzv/waits.hpp"
#include "ddprun/util/backoff.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace ddprun::rdzv {
namespace {

/// A step that finished without forming the round: nothing to return, or its error.
Result<std::optional<RoundResult>> not_yet(const Result<void>& r) {
  if (!r) {
    return r.error();
  }
  return std::optional<RoundResult>();
}

}  // namespace

std::shared_ptr<DynamicRendezvous> DynamicRendezvous::create(asio::io_context& ctx, Kv& kv,
                                                             RdzvSettings settings, NodeDesc self,
                                                             const util::Clock& clock,
                                                             util::Random& random) {
  return std::make_shared<DynamicRendezvous>(Passkey{}, ctx, kv, std::move(settings),
                                             std::move(self), clock, random);
}

DynamicRendezvous::DynamicRendezvous(Passkey, asio::io_context& ctx, Kv& kv, RdzvSettings settings,
                                     NodeDesc self, const util::Clock& clock, util::Random& random)
    : kv_(kv),
      settings_(std::move(settings)),
      self_(std::move(self)),
      clock_(clock),
      key_(state_key(settings_.run_id)),
      random_(random),
      store_(ctx, kv, settings_.run_id, clock),
      watch_timer_(ctx),
      join_pause_(ctx),
      keep_alive_(ctx, store_, settings_, self_.id(), last_round_),
      stacks_(store_, settings_, self_.id(), last_round_, random),
      progress_(store_, settings_) {}

asio::awaitable<Result<DynamicRendezvous::Header>> DynamicRendezvous::read_header() {
  auto h = co_await rdzv::read_header(kv_, key_);
  if (h) {
    note_exclusions(h->value);
  }
  co_return h;
}

// update_header (header_update.hpp) with this node's backoff after a lost race: the header
// written, or the one the change no longer applied to; ErrorCode::timeout past `deadline`
// (wall ms).
asio::awaitable<Result<RoundHeader>> DynamicRendezvous::update(const Change& change,
                                                               std::optional<WallMs> deadline) {
  HeaderUpdate how{
      [this, deadline](int /*lost*/) { return deadline && wall_now() > *deadline; },
      [this](int lost) {
        return store_.sleep(contention_backoff(lost, settings_.poll_interval, random_.unit()));
      },
      [this](const RoundHeader& h) { note_exclusions(h); },
      "rendezvous " + settings_.run_id + ": the state kept changing under this node"};
  auto done = co_await update_header(kv_, key_, change, how);
  if (!done) {
    co_return done.error();
  }
  co_return std::move(done->header);
}

asio::awaitable<void> DynamicRendezvous::jitter() {
  if (ever_joined_ || settings_.first_round_jitter.count() <= 0) {
    co_return;
  }
  const auto span = static_cast<double>(settings_.first_round_jitter.count());
  co_await store_.sleep(
      std::chrono::milliseconds(static_cast<std::int64_t>(span * random_.unit())));
}

/// Counts a join loop for as long as it runs.
struct DynamicRendezvous::OpGuard {
  int& count;
  explicit OpGuard(int& c) : count(c) { ++count; }
  OpGuard(const OpGuard&) = delete;
  OpGuard& operator=(const OpGuard&) = delete;
  ~OpGuard() { --count; }
};

std::optional<int> DynamicRendezvous::ran_round() const {
  return last_round_ ? std::optional<int>(last_round_->round) : std::nullopt;
}

asio::awaitable<Result<RoundResult>> DynamicRendezvous::next_round() {
  auto keep = shared_from_this();
  stop_watch();
  OpGuard guard(ops_running_);
  co_await jitter();
  join_.deadline = progress_.start() + settings_.join_timeout.count();
  keep_alive_.start(shared_from_this());
  auto result = co_await join();
  const int waited_round = join_.spare() ? join_.waiting_round : -1;
  if (!result && leaving_) {
    co_return make_error(ErrorCode::closed,
                         "rendezvous " + settings_.run_id + ": this node is leaving");
  }
  if (!result) {
    co_return result.error();  // the slot stays known, so leave() can still withdraw it
  }
  join_.joined();
  ever_joined_ = true;
  keep_alive_.forget_drop();
  last_round_ = *result;
  self_.last_round = result->round;  // for the next close: a surviving rank 0 keeps rank 0
  self_.last_rank = result->group_rank();
  if (waited_round >= 0) {
    co_await note_spare(waited_round, *result);
  }
  spdlog::info("rendezvous {} round {} complete: group_rank={} group_world_size={} ({})",
               settings_.run_id, result->round, result->group_rank(), result->group_world_size(),
               result->members.empty() ? std::to_string(result->group_world_size()) + " nodes"
                                       : render_node_names(result->members));
  co_return result;
}

// Every look decides afresh from the header, and every step is safe to take again after it
// failed midway (an update compares against the bytes read, a slot is counted once: JoinState
// and the Kv's own add), so a failure the store says may pass only costs a pause.
asio::awaitable<Result<RoundResult>> DynamicRendezvous::join() {
  for (int failed = 0;;) {
    if (leaving_) {
      co_return make_error(ErrorCode::closed,
                           "rendezvous " + settings_.run_id + ": this node is leaving");
    }
    auto looked = co_await join_once();
    if (looked && *looked) {
      co_return std::move(**looked);
    }
    if (looked) {
      failed = 0;
    } else if (!co_await pause_after(looked.error(), failed++)) {
      if (ever_joined_ && looked.error().code == ErrorCode::io &&
          !kv_.is_transient(looked.error())) {
        co_return render_store_gone(looked.error(), settings_,
                                    keep_alive_.dropped());  // c10d's store host
      }
      co_return looked.error();
    }
  }
}

asio::awaitable<Result<std::optional<RoundResult>>> DynamicRendezvous::join_once() {
  using R = Result<std::optional<RoundResult>>;
  auto h = co_await read_header();
  if (!h) {
    co_return h.error();
  }
  if (h->token.empty() && ever_joined_) {
    co_return R(co_await run_gone());  // the run ended and its keys were removed
  }
  if (h->token.empty()) {
    // The first node creates the header, so `ddprun status` finds the run at once.
    auto created = co_await kv_.compare_set(key_, "", encode_header(h->value));
    if (!created) {
      co_return created.error();
    }
  }
  join_.note_header(h->value, ran_round(), wall_now(), settings_);
  const JoinDecision d = decide_join(h->value, join_view(), settings_);
  if (d.step == JoinStep::error_closed || d.step == JoinStep::error_timeout) {
    co_return R(co_await join_failed(h->value, d.step));
  }
  auto done = co_await join_step(h->value, d);
  if (done && !*done && (d.step == JoinStep::wait || d.step == JoinStep::await_assignment)) {
    co_await progress_.log(h->value, is_standing_by(h->value, join_view(), settings_),
                           join_.deadline);
  }
  co_return done;
}

// After a join's step failed with `e`: pauses (etcd_retry_pause: only etcd's failures may
// pass) and returns true when the join should look again (the Kv says the failure may
// pass, the `attempt`-th in a row, and the join deadline leaves room for the pause), false
// when the join fails with `e`.
asio::awaitable<bool> DynamicRendezvous::pause_after(const Error& e, int attempt) {
  if (leaving_ || !kv_.is_transient(e)) {
    co_return false;
  }
  const auto pause = etcd_retry_pause(attempt, random_.spread());
  if (wall_now() + pause.count() >= join_.deadline) {
    co_return false;
  }
  if (attempt == 0) {
    spdlog::warn("rendezvous {}: {}; looking again until the join deadline", settings_.run_id,
                 e.message);
  } else {
    spdlog::debug("rendezvous {}: {} (failure {} in a row; next look in {} ms)", settings_.run_id,
                  e.message, attempt + 1, pause.count());
  }
  join_pause_.expires_after(pause);
  boost::system::error_code ec;
  co_await join_pause_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  co_return !leaving_;
}

asio::awaitable<Result<std::optional<RoundResult>>> DynamicRendezvous::join_step(
    const RoundHeader& h, const JoinDecision& d) {
  using R = Result<std::optional<RoundResult>>;
  const int round = h.round;
  const std::string me = self_.id();
  Result<RoundHeader> changed = h;
  switch (d.step) {
    case JoinStep::take_slot:
      co_return not_yet(co_await take_slot(round));
    case JoinStep::claim:
      co_return not_yet(co_await close_round(h));
    case JoinStep::await_assignment:
      co_return co_await await_assignment(h, d.until);
    case JoinStep::wait: {
      // Only the header can change the decision before `until`: a store that watches wakes
      // this node at its change, so the look after the wait is a fallback there.
      const WallMs until = join_wait_until(d.until, join_view(), settings_, kv_.watches_changes());
      std::vector<std::string> keys{key_};
      co_await store_.wait_for_others(
          std::move(keys), std::chrono::milliseconds(std::max<WallMs>(1, until - wall_now())));
      co_return R(std::nullopt);
    }
    case JoinStep::set_deadline:
      changed = co_await update(
          [&](const RoundHeader& c) { return with_deadline(c, round, wall_now(), settings_); });
      break;
    case JoinStep::join_wait_list:
      changed =
          co_await update([&](const RoundHeader& c) { return with_waiting(c, round, me, 1); });
      if (changed && changed->round == round && changed->phase != Phase::joining) {
        join_.waiting_round = round;
      }
      break;
    case JoinStep::end_previous:
      changed = co_await update(
          [&](const RoundHeader& c) { return with_next_round(c, round, Phase::complete, {}, {}); });
      break;
    case JoinStep::abort_stale_close:
      spdlog::warn(
          "rendezvous {} round {}: {} began closing the round {} ms ago and went silent; "
          "starting over",
          settings_.run_id, round, h.closer, wall_now() - h.closing_since);
      changed = co_await update(
          [&](const RoundHeader& c) { return with_next_round(c, round, Phase::closing, {}, {}); });
      break;
    case JoinStep::error_closed:
    case JoinStep::error_timeout:
      break;
  }
  if (!changed) {
    co_return changed.error();
  }
  co_return R(std::nullopt);
}

asio::awaitable<Result<void>> DynamicRendezvous::take_slot(int round) {
  if (join_.counted_round != round) {
    auto slot = co_await kv_.add(slots_key(settings_.run_id, round), 1);
    if (!slot) {
      co_return slot.error();
    }
    join_.counted_round = round;
    join_.counted_slot = static_cast<int>(*slot);
  }
  std::vector<std::pair<std::string, std::string>> pairs{
      {slot_key(settings_.run_id, round, join_.counted_slot), encode_node(self_)},
      {heartbeat_key(settings_.run_id, self_.id()), std::to_string(wall_now())}};
  const WallMs beat = wall_now();
  auto written = co_await kv_.multi_set(std::move(pairs));
  if (!written) {
    co_return written.error();  // the count stays: the next take_slot() writes this slot
  }
  keep_alive_.note_beat(beat);
  join_.slot_written(round);
  co_return Result<void>{};
}

}  // namespace ddprun::rdzv
