// DynamicRendezvous: store I/O around the pure decisions of decide.cpp.
//
// Every op (exit, join, close, report failure) is the same loop in run_op(): load the state,
// sanitize it, decide, and either finish, wait poll_interval and load again, or write the
// applied state with compare_set against the exact bytes read. The store answers with the
// value it now holds, which becomes the next iteration's state whether or not our write won.
// Ops keep their state in locals, so the heartbeat loop and watch() interleaving on the same
// io_context cannot mix up tokens.

#include "ddprun/rdzv/handler.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>

namespace ddprun::rdzv {
namespace {

bool is_terminal(Action a) {
  return a == Action::done || a == Action::error_closed || a == Action::error_timeout;
}

}  // namespace

std::shared_ptr<DynamicRendezvous> DynamicRendezvous::create(asio::io_context& ctx, Kv& kv,
                                                             RdzvSettings settings, NodeDesc self,
                                                             const util::Clock& clock) {
  return std::make_shared<DynamicRendezvous>(Passkey{}, ctx, kv, std::move(settings),
                                             std::move(self), clock);
}

DynamicRendezvous::DynamicRendezvous(Passkey, asio::io_context& ctx, Kv& kv, RdzvSettings settings,
                                     NodeDesc self, const util::Clock& clock)
    : ctx_(ctx),
      kv_(kv),
      settings_(std::move(settings)),
      self_(std::move(self)),
      clock_(clock),
      key_(state_key(settings_.run_id)),
      heartbeat_timer_(ctx),
      watch_timer_(ctx) {}

WallMs DynamicRendezvous::wall_now() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.wall_now().time_since_epoch())
      .count();
}

asio::awaitable<Result<DynamicRendezvous::Synced>> DynamicRendezvous::load() {
  auto raw = co_await kv_.get_now(key_);
  if (!raw) {
    co_return raw.error();
  }
  if (!*raw) {
    co_return Synced{RdzvState{}, ""};
  }
  auto state = decode_state(**raw);
  if (!state) {
    co_return state.error();
  }
  last_waiting_ = static_cast<int>(state->wait_list.size());
  co_return Synced{std::move(*state), std::move(**raw)};
}

asio::awaitable<Result<DynamicRendezvous::Synced>> DynamicRendezvous::write(const Synced& from,
                                                                            const RdzvState& next) {
  auto now_stored = co_await kv_.compare_set(key_, from.token, encode_state(next));
  if (!now_stored) {
    co_return now_stored.error();
  }
  if (*now_stored == from.token) {
    // TCPStore answers `expected` when the key is missing: read what is really there.
    co_return co_await load();
  }
  auto state = decode_state(*now_stored);
  if (!state) {
    co_return state.error();
  }
  last_waiting_ = static_cast<int>(state->wait_list.size());
  co_return Synced{std::move(*state), std::move(*now_stored)};
}

asio::awaitable<void> DynamicRendezvous::sleep(std::chrono::milliseconds d) {
  asio::steady_timer timer(ctx_, d);
  boost::system::error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

/// Counts a run_op() loop for as long as it runs.
struct DynamicRendezvous::OpGuard {
  int& count;
  explicit OpGuard(int& c) : count(c) { ++count; }
  OpGuard(const OpGuard&) = delete;
  OpGuard& operator=(const OpGuard&) = delete;
  ~OpGuard() { --count; }
};

asio::awaitable<Result<DynamicRendezvous::OpEnd>> DynamicRendezvous::run_op(Decide decide,
                                                                            bool log_progress,
                                                                            bool is_leave) {
  OpGuard guard(ops_running_);
  auto cur = co_await load();
  int lost_in_a_row = 0;  ///< compare-and-sets lost to other nodes since our last win
  while (true) {
    if (leaving_ && !is_leave) {
      co_return make_error(ErrorCode::closed,
                           "rendezvous " + settings_.run_id + ": this node is leaving");
    }
    if (!cur) {
      co_return cur.error();
    }
    const WallMs now = wall_now();
    auto clean = sanitize(cur->state, now, settings_);
    if (log_progress) {
      remember_seen(clean.state);
    }
    const Action action = decide(*this, clean.state, now);
    if (is_terminal(action)) {
      co_return OpEnd{action, std::move(clean.state)};
    }
    if (action == Action::wait && clean.dropped.empty()) {
      if (log_progress) {
        maybe_log_progress(clean.state, now);
      }
      co_await sleep(settings_.poll_interval);
      cur = co_await load();
      continue;
    }
    // A wait after dropping dead nodes still writes, so the drop becomes everyone's view.
    const RdzvState desired = apply(action, clean.state, self_, now, settings_);
    cur = co_await write(*cur, desired);
    lost_in_a_row = cur && cur->state != desired ? lost_in_a_row + 1 : 0;
    if (lost_in_a_row > 0) {
      co_await sleep(contention_backoff(lost_in_a_row, settings_.poll_interval, unit_random()));
      cur = co_await load();
    }
  }
}

double DynamicRendezvous::unit_random() {
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
}

void DynamicRendezvous::maybe_log_progress(const RdzvState& state, WallMs now) {
  if (now < next_progress_log_) {
    return;
  }
  next_progress_log_ = now + settings_.progress_interval.count();
  spdlog::info("{}", render_progress(state, self_, now, join_deadline_, settings_));
}

void DynamicRendezvous::remember_seen(const RdzvState& state) {
  if (state.round != seen_round_) {
    seen_.clear();
    seen_round_ = state.round;
  }
  for (const auto& [id, p] : state.participants) {
    seen_[id] = p.node;
  }
  for (const auto& [id, n] : state.wait_list) {
    seen_[id] = n;
  }
}

std::vector<NodeDesc> DynamicRendezvous::seen_nodes() const {
  std::vector<NodeDesc> out;
  for (const auto& [id, n] : seen_) {
    out.push_back(n);
  }
  if (seen_.count(self_.id()) == 0) {
    out.push_back(self_);
  }
  std::sort(out.begin(), out.end(), rank_before);
  return out;
}

asio::awaitable<void> DynamicRendezvous::jitter() {
  if (ever_joined_ || settings_.first_round_jitter.count() <= 0) {
    co_return;
  }
  const auto span = static_cast<double>(settings_.first_round_jitter.count());
  co_await sleep(std::chrono::milliseconds(static_cast<std::int64_t>(span * unit_random())));
}

asio::awaitable<Result<RoundResult>> DynamicRendezvous::next_round() {
  auto keep = shared_from_this();
  stop_watch();
  co_await jitter();
  join_deadline_ = wall_now() + settings_.join_timeout.count();
  seen_.clear();
  seen_round_ = -1;
  next_progress_log_ = wall_now() + settings_.progress_interval.count();
  auto left =
      co_await run_op([](const DynamicRendezvous& r, const RdzvState& s,
                         WallMs now) { return decide_exit(s, r.self_, now, r.join_deadline_); },
                      false);
  if (!left) {
    co_return left.error();
  }
  if (left->action == Action::error_timeout) {
    co_return make_error(ErrorCode::timeout, "rendezvous " + settings_.run_id +
                                                 ": could not leave the previous round in time");
  }
  auto joined = co_await run_op(
      [](const DynamicRendezvous& r, const RdzvState& s, WallMs now) {
        return decide_join(s, r.self_, now, r.join_deadline_, r.settings_);
      },
      true);
  if (!joined) {
    co_return joined.error();
  }
  if (joined->action == Action::error_closed) {
    co_return make_error(ErrorCode::closed, render_closed(settings_));
  }
  if (joined->action == Action::error_timeout) {
    std::vector<NodeDesc> previous;
    if (last_round_) {
      previous = last_round_->participants;
    }
    co_return make_error(ErrorCode::timeout,
                         render_timeout(joined->state, settings_, seen_nodes(), previous));
  }
  RoundResult result = make_result(joined->state);
  ever_joined_ = true;
  last_round_ = result;
  start_heartbeats();
  spdlog::info("rendezvous {} round {} complete: group_rank={} group_world_size={} ({})",
               settings_.run_id, result.round, result.group_rank, result.group_world_size,
               render_node_names(result.participants));
  co_return result;
}

RoundResult DynamicRendezvous::make_result(const RdzvState& state) const {
  RoundResult r;
  r.round = state.round;
  r.participants = ordered_participants(state);
  r.group_world_size = static_cast<int>(r.participants.size());
  r.group_rank = state.participants.at(self_.id()).rank;
  return r;
}

}  // namespace ddprun::rdzv
