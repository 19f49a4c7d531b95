// DynamicRendezvous while workers run and at job end: heartbeats, watch(), failure reports,
// the MASTER_ADDR/PORT exchange, the exit barrier and the close op.

#include "ddprun/rdzv/handler.hpp"
#include "ddprun/util/strings.hpp"

#include <spdlog/spdlog.h>

namespace ddprun::rdzv {
namespace {

constexpr const char* k_master_addr_key = "MASTER_ADDR";
constexpr const char* k_master_port_key = "MASTER_PORT";
constexpr const char* k_done_key = "done";
constexpr int k_max_port = 65535;
/// How often leave() checks whether the ops it ended have returned.
constexpr std::chrono::milliseconds k_ops_poll{20};

}  // namespace

void DynamicRendezvous::start_heartbeats() {
  if (heartbeats_on_) {
    return;
  }
  heartbeats_on_ = true;
  asio::co_spawn(ctx_, heartbeat_loop(shared_from_this(), ++heartbeat_generation_), asio::detached);
}

void DynamicRendezvous::stop() {
  stop_watch();
  heartbeats_on_ = false;
  ++heartbeat_generation_;
  heartbeat_timer_.cancel();
}

// `keep` holds this object alive for as long as the loop runs.
asio::awaitable<void> DynamicRendezvous::heartbeat_loop(
    [[maybe_unused]] std::shared_ptr<DynamicRendezvous> keep, int generation) {
  while (generation == heartbeat_generation_) {
    heartbeat_timer_.expires_after(settings_.keep_alive_interval);
    boost::system::error_code ec;
    co_await heartbeat_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (generation == heartbeat_generation_) {
      co_await beat_once();
    }
  }
}

// One keep-alive: only while we are in the state, and only when our beat is stale, so a
// beat never re-adds a node that was dropped or left.
asio::awaitable<void> DynamicRendezvous::beat_once() {
  auto cur = co_await load();
  if (!cur) {
    spdlog::warn("rendezvous {}: node {} has failed to send a keep-alive heartbeat: {}",
                 settings_.run_id, self_.id(), cur.error().message);
    co_return;
  }
  const WallMs now = wall_now();
  const auto& s = cur->state;
  const bool member = s.participants.count(self_.id()) != 0 || s.wait_list.count(self_.id()) != 0;
  auto beat = s.last_heartbeats.find(self_.id());
  const WallMs half_interval = settings_.keep_alive_interval.count() / 2;
  if (!member || s.closed ||
      (beat != s.last_heartbeats.end() && now - beat->second < half_interval)) {
    co_return;
  }
  auto written = co_await write(*cur, apply(Action::keep_alive, s, self_, now, settings_));
  if (!written) {
    spdlog::warn("rendezvous {}: node {} has failed to send a keep-alive heartbeat: {}",
                 settings_.run_id, self_.id(), written.error().message);
  }
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
  while (true) {
    watch_timer_.expires_after(settings_.watch_interval);
    boost::system::error_code ec;
    co_await watch_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (generation != watch_generation_) {
      co_return RunSignal::none;
    }
    auto cur = co_await load();
    if (generation != watch_generation_) {
      co_return RunSignal::none;
    }
    if (!cur) {
      // Since the failure, not since the call: a call that timed out because this agent was
      // stopped (SIGSTOP) says nothing about the store.
      const WallMs now = wall_now();
      failing_since = failing_since.value_or(now);
      if (decide_store_unreachable(failing_since, now, settings_) == RunSignal::store_lost) {
        spdlog::error("{}", render_store_lost(settings_, *failing_since, now, cur.error().message));
        co_return RunSignal::store_lost;
      }
      spdlog::warn("rendezvous {}: watching round {}: {}", settings_.run_id, last_round_->round,
                   cur.error().message);
      continue;
    }
    failing_since.reset();
    auto clean = sanitize(cur->state, wall_now(), settings_);
    auto signal = decide_while_running(clean.state, self_, last_round_->round,
                                       last_round_->participants, settings_);
    if (signal != RunSignal::none) {
      spdlog::info("{}", render_signal(signal, clean.state, self_, last_round_->round,
                                       last_round_->participants, settings_));
      co_return signal;
    }
  }
}

asio::awaitable<Result<void>> DynamicRendezvous::wait_for_ops(WallMs deadline) {
  while (ops_running_ > 0) {
    if (wall_now() > deadline) {
      co_return make_error(ErrorCode::timeout, "rendezvous " + settings_.run_id +
                                                   ": an operation in progress did not end");
    }
    co_await sleep(k_ops_poll);
  }
  co_return Result<void>{};
}

asio::awaitable<Result<void>> DynamicRendezvous::leave(std::chrono::milliseconds bound) {
  auto keep = shared_from_this();
  stop();
  leaving_ = true;  // a join in progress must not re-add this node after it left
  op_deadline_ = wall_now() + bound.count();
  if (auto idle = co_await wait_for_ops(op_deadline_); !idle) {
    co_return idle.error();
  }
  auto end =
      co_await run_op([](const DynamicRendezvous& r, const RdzvState& s,
                         WallMs now) { return decide_leave(s, r.self_, now, r.op_deadline_); },
                      false, true);
  if (!end) {
    co_return end.error();
  }
  if (end->action == Action::error_timeout) {
    co_return make_error(ErrorCode::timeout, "rendezvous " + settings_.run_id +
                                                 ": could not leave within " +
                                                 std::to_string(bound.count()) + " ms");
  }
  co_return Result<void>{};
}

asio::awaitable<Result<void>> DynamicRendezvous::report_failure() {
  auto keep = shared_from_this();
  if (!last_round_) {
    co_return Result<void>{};
  }
  op_deadline_ = wall_now() + settings_.read_timeout.count();
  auto end = co_await run_op(
      [](const DynamicRendezvous& r, const RdzvState& s, WallMs now) {
        return decide_report_failure(s, r.last_round_->round, now, r.op_deadline_);
      },
      false);
  if (!end) {
    co_return end.error();
  }
  if (end->action == Action::error_timeout) {
    co_return make_error(ErrorCode::timeout,
                         "rendezvous " + settings_.run_id + ": could not report the failure");
  }
  co_return Result<void>{};
}

asio::awaitable<Result<MasterEndpoint>> DynamicRendezvous::exchange_master(
    RoundResult round, std::optional<MasterEndpoint> mine) {
  auto keep = shared_from_this();
  const std::string prefix = round_prefix(settings_.run_id, round.round);
  if (round.group_rank == 0) {
    if (!mine) {
      co_return make_error(ErrorCode::internal, "exchange_master: group rank 0 has no endpoint");
    }
    auto a = co_await kv_.set(prefix + k_master_addr_key, mine->addr);
    if (!a) {
      co_return a.error();
    }
    auto p = co_await kv_.set(prefix + k_master_port_key, std::to_string(mine->port));
    if (!p) {
      co_return p.error();
    }
  }
  auto addr = co_await kv_.get(prefix + k_master_addr_key, settings_.read_timeout);
  if (!addr) {
    co_return addr.error();
  }
  auto port_text = co_await kv_.get(prefix + k_master_port_key, settings_.read_timeout);
  if (!port_text) {
    co_return port_text.error();
  }
  auto port = util::parse_int_in(*port_text, 1, k_max_port);
  if (!port) {
    co_return make_error(ErrorCode::protocol,
                         prefix + k_master_port_key + ": " + port_text.value() + " is not a port");
  }
  co_return MasterEndpoint{*addr, static_cast<int>(*port)};
}

asio::awaitable<Result<void>> DynamicRendezvous::exit_barrier(std::chrono::milliseconds timeout) {
  auto keep = shared_from_this();
  if (!last_round_) {
    co_return Result<void>{};
  }
  const std::string key = round_prefix(settings_.run_id, last_round_->round) + k_done_key;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto count = co_await kv_.add(key, 1);
  while (true) {
    if (!count) {
      co_return count.error();
    }
    if (*count >= last_round_->group_world_size) {
      co_return Result<void>{};
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      co_return make_error(ErrorCode::timeout,
                           "rendezvous " + settings_.run_id +
                               ": exit barrier: " + std::to_string(*count) + "/" +
                               std::to_string(last_round_->group_world_size) +
                               " nodes done after " + std::to_string(timeout.count()) + " ms");
    }
    co_await sleep(settings_.poll_interval);
    count = co_await kv_.add(key, 0);
  }
}

asio::awaitable<Result<void>> DynamicRendezvous::shutdown() {
  auto keep = shared_from_this();
  stop();
  op_deadline_ = wall_now() + settings_.close_timeout.count();
  auto end = co_await run_op([](const DynamicRendezvous& r, const RdzvState& s,
                                WallMs now) { return decide_close(s, now, r.op_deadline_); },
                             false);
  if (!end) {
    spdlog::warn("rendezvous {}: closing failed: {}", settings_.run_id, end.error().message);
    co_return end.error();
  }
  if (end->action == Action::error_timeout) {
    co_return make_error(ErrorCode::timeout, "rendezvous " + settings_.run_id +
                                                 ": could not close within close_timeout");
  }
  co_return Result<void>{};
}

}  // namespace ddprun::rdzv
