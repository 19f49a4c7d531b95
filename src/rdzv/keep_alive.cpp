// KeepAlive: this node's heartbeat in the rendezvous (keep_alive.hpp).

#include "ddprun/rdzv/keep_alive.hpp"

#include "ddprun/rdzv/run_end.hpp"

#include <spdlog/spdlog.h>

namespace ddprun::rdzv {

KeepAlive::KeepAlive(asio::io_context& ctx, RoundStore& store, const RdzvSettings& settings,
                     std::string self_id, const std::optional<RoundResult>& round)
    : store_(store),
      settings_(settings),
      self_id_(std::move(self_id)),
      round_now_(round),
      timer_(ctx) {}

void KeepAlive::start(std::shared_ptr<void> keep) {
  if (on_) {
    return;
  }
  on_ = true;
  asio::co_spawn(timer_.get_executor(), loop(std::move(keep), ++generation_), asio::detached);
}

void KeepAlive::stop() {
  on_ = false;
  ++generation_;
  timer_.cancel();
}

asio::awaitable<void> KeepAlive::loop([[maybe_unused]] std::shared_ptr<void> keep, int generation) {
  while (generation == generation_) {
    timer_.expires_after(settings_.keep_alive_interval);
    boost::system::error_code ec;
    co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (generation == generation_) {
      co_await beat_once();
    }
  }
}

asio::awaitable<void> KeepAlive::beat_once() {
  const WallMs beat = store_.wall_now();
  std::vector<std::pair<std::string, std::string>> pairs{
      {heartbeat_key(settings_.run_id, self_id_), std::to_string(beat)}};
  if (progress_source_) {  // in the same request: no extra round trip per beat
    pairs.emplace_back(progress_key(settings_.run_id, self_id_),
                       render_progress_value(progress_source_()));
  }
  const auto stall = stall_share_.mine ? stall_share_.mine() : std::nullopt;
  if (stall) {
    pairs.emplace_back(node_stall_key(settings_.run_id, self_id_),
                       encode_node_stall(stall->timeout, stall->figures));
  }
  auto ok = co_await store_.kv().multi_set(std::move(pairs));
  if (!ok) {
    spdlog::warn("rendezvous {}: node {} has failed to send a keep-alive heartbeat: {}",
                 settings_.run_id, self_id_, ok.error().message);
    co_return;
  }
  note_beat(beat);
  if (stall) {
    co_await share_stall_figures(stall->figures);
  }
}

void KeepAlive::note_beat(WallMs beat) {
  if (auto silent_until = dropped_at(last_beat_, beat, settings_)) {
    dropped_ = silent_until;
  }
  last_beat_ = beat;
}

std::optional<WallMs> KeepAlive::dropped() const {
  if (auto now = dropped_at(last_beat_, store_.wall_now(), settings_)) {
    return now;
  }
  return dropped_;
}

// One read per keep-alive, one write only when this node knows more than the round does. A
// compare-and-set lost to another member is not retried now: the next keep-alive sees the
// winner's figures and raises them again if this node's are still larger.
asio::awaitable<void> KeepAlive::share_stall_figures(StallFigures mine) {
  if (!round_now_) {
    co_return;  // not in a round yet: the figures wait for its members
  }
  const auto key = round_stall_key(settings_.run_id, round_now_->round);
  auto got = co_await store_.read_one(key);
  if (!got) {
    co_return;  // the store is failing: the keep-alive's warning says so
  }
  const std::string seen = std::move(*got);
  const auto theirs = decode_stall_figures(seen);
  const auto merged = theirs ? merge(*theirs, mine) : mine;
  if (!theirs || merged != *theirs) {
    (void)co_await store_.kv().compare_set(key, seen, encode_stall_figures(merged));
  }
  if (stall_share_.adopt) {
    stall_share_.adopt(merged);
  }
}

}  // namespace ddprun::rdzv
