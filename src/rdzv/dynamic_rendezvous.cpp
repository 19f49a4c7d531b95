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
#include "ddprun/util/batches.hpp"

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
    : ctx_(ctx),
      kv_(kv),
      settings_(std::move(settings)),
      self_(std::move(self)),
      clock_(clock),
      key_(state_key(settings_.run_id)),
      random_(random),
      heartbeat_timer_(ctx),
      watch_timer_(ctx),
      join_pause_(ctx) {}

WallMs DynamicRendezvous::wall_now() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.wall_now().time_since_epoch())
      .count();
}

asio::awaitable<Result<DynamicRendezvous::Header>> DynamicRendezvous::read_header() {
  auto h = co_await rdzv::read_header(kv_, key_);
  if (h) {
    note_exclusions(h->value);
  }
  co_return h;
}

asio::awaitable<Result<RoundHeader>> DynamicRendezvous::update(const Change& change,
                                                               std::optional<WallMs> deadline) {
  HeaderUpdate how{
      [this, deadline](int /*lost*/) { return deadline && wall_now() > *deadline; },
      [this](int lost) {
        return sleep(contention_backoff(lost, settings_.poll_interval, random_.unit()));
      },
      [this](const RoundHeader& h) { note_exclusions(h); },
      "rendezvous " + settings_.run_id + ": the state kept changing under this node"};
  auto done = co_await update_header(kv_, key_, change, how);
  if (!done) {
    co_return done.error();
  }
  co_return std::move(done->header);
}

asio::awaitable<Result<std::string>> DynamicRendezvous::read_one(std::string key) {
  std::vector<std::string> keys{std::move(key)};
  auto got = co_await kv_.multi_get_now(std::move(keys));
  if (!got) {
    co_return got.error();
  }
  co_return std::move(got->at(0));
}

asio::awaitable<Result<std::vector<std::string>>> DynamicRendezvous::read_many(
    std::vector<std::string> keys) {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (auto& batch : util::batches(std::move(keys), k_keys_per_request)) {
    auto part = co_await kv_.multi_get_now(std::move(batch));
    if (!part) {
      co_return part.error();
    }
    std::move(part->begin(), part->end(), std::back_inserter(out));
  }
  co_return out;
}

asio::awaitable<void> DynamicRendezvous::sleep(std::chrono::milliseconds d) {
  asio::steady_timer timer(ctx_, d);
  boost::system::error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

asio::awaitable<bool> DynamicRendezvous::wait_for_others(std::vector<std::string> keys,
                                                         std::chrono::milliseconds d) {
  asio::steady_timer timer(ctx_, d);
  // Named: g++ 12 destroys a braced temporary argument of a coroutine call made inside a
  // coroutine twice (GCC bug 99576).
  WatchSet set{std::move(keys), {}};
  co_return co_await kv_.wait_for_change(std::move(set), timer);
}

asio::awaitable<void> DynamicRendezvous::jitter() {
  if (ever_joined_ || settings_.first_round_jitter.count() <= 0) {
    co_return;
  }
  const auto span = static_cast<double>(settings_.first_round_jitter.count());
  co_await sleep(std::chrono::milliseconds(static_cast<std::int64_t>(span * random_.unit())));
}

/// Counts a join loop for as long as it runs.
struct DynamicRendezvous::OpGuard {
  int& count;
  explicit OpGuard(int& c) : count(c) { ++count; }
  OpGuard(const OpGuard&) = delete;
  OpGuard& operator=(const OpGuard&) = delete;
  ~OpGuard() { --count; }
};

JoinView DynamicRendezvous::join_view() const {
  JoinView v;
  v.slot = slot_;
  v.slot_round = slot_round_;
  v.waiting_round = waiting_round_;
  if (last_round_) {
    v.ran_round = last_round_->round;
  }
  v.now = wall_now();
  v.join_deadline = join_deadline_;
  v.spare = stood_by_round_ >= 0 && stood_by_round_ == waiting_round_;
  v.round_seen_at = seen_round_at_;
  return v;
}

void DynamicRendezvous::note_join_header(const RoundHeader& h) {
  if (h.round != seen_round_) {
    seen_round_ = h.round;
    seen_round_at_ = wall_now();
  }
  if (is_standing_by(h, join_view(), settings_)) {
    stood_by_round_ = h.round;
  }
  join_deadline_ = join_deadline_after(h, join_view(), settings_);
}

asio::awaitable<Result<RoundResult>> DynamicRendezvous::next_round() {
  auto keep = shared_from_this();
  stop_watch();
  OpGuard guard(ops_running_);
  co_await jitter();
  join_started_ = wall_now();
  join_deadline_ = join_started_ + settings_.join_timeout.count();
  last_warning_.reset();
  next_progress_log_ = wall_now() + settings_.progress_interval.count();
  start_heartbeats();
  auto result = co_await join();
  const int waited_round = join_view().spare ? waiting_round_ : -1;
  if (!result && leaving_) {
    co_return make_error(ErrorCode::closed,
                         "rendezvous " + settings_.run_id + ": this node is leaving");
  }
  if (!result) {
    co_return result.error();  // the slot stays known, so leave() can still withdraw it
  }
  slot_ = 0;
  slot_round_ = -1;
  waiting_round_ = -1;
  stood_by_round_ = -1;
  ever_joined_ = true;
  dropped_.reset();
  last_round_ = *result;
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
// failed midway (an update compares against the bytes read, a slot is counted once: counted_
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
        co_return render_store_gone(looked.error(), settings_, dropped());  // c10d's store host
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
  note_join_header(h->value);
  const JoinDecision d = decide_join(h->value, join_view(), settings_);
  if (d.step == JoinStep::error_closed || d.step == JoinStep::error_timeout) {
    co_return R(co_await join_failed(h->value, d.step));
  }
  auto done = co_await join_step(h->value, d);
  if (done && !*done && (d.step == JoinStep::wait || d.step == JoinStep::await_assignment)) {
    co_await log_progress(h->value);
  }
  co_return done;
}

asio::awaitable<bool> DynamicRendezvous::pause_after(const Error& e, int attempt) {
  if (leaving_ || !kv_.is_transient(e)) {
    co_return false;
  }
  const auto pause = etcd_retry_pause(attempt, random_.spread());
  if (wall_now() + pause.count() >= join_deadline_) {
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
      co_await wait_for_others(std::move(keys),
                               std::chrono::milliseconds(std::max<WallMs>(1, until - wall_now())));
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
        waiting_round_ = round;
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
  if (counted_.round != round) {
    auto slot = co_await kv_.add(slots_key(settings_.run_id, round), 1);
    if (!slot) {
      co_return slot.error();
    }
    counted_ = Counted{round, static_cast<int>(*slot)};
  }
  std::vector<std::pair<std::string, std::string>> pairs{
      {slot_key(settings_.run_id, round, counted_.slot), encode_node(self_)},
      {heartbeat_key(settings_.run_id, self_.id()), std::to_string(wall_now())}};
  const WallMs beat = wall_now();
  auto written = co_await kv_.multi_set(std::move(pairs));
  if (!written) {
    co_return written.error();  // counted_ stays: the next take_slot() writes this slot
  }
  note_beat(beat);
  slot_ = counted_.slot;
  slot_round_ = round;
  counted_ = Counted{};
  co_return Result<void>{};
}

}  // namespace ddprun::rdzv
