// JoinProgress: what a join that waits tells the user (join_progress.hpp).

#include "ddprun/rdzv/join_progress.hpp"

#include "ddprun/rdzv/decide.hpp"

#include <spdlog/spdlog.h>

namespace ddprun::rdzv {

JoinProgress::JoinProgress(RoundStore& store, const RdzvSettings& settings)
    : store_(store), settings_(settings) {}

WallMs JoinProgress::start() {
  started_ = store_.wall_now();
  last_warning_.reset();
  next_log_ = started_ + settings_.progress_interval.count();
  return started_;
}

asio::awaitable<void> JoinProgress::log(const RoundHeader& h, bool standing_by,
                                        WallMs join_deadline) {
  const WallMs now = store_.wall_now();
  const bool warn_due = h.phase == Phase::joining &&
                        is_incomplete_warning_due(started_, last_warning_, now, settings_);
  if (!warn_due && now < next_log_) {
    co_return;
  }
  next_log_ = now + settings_.progress_interval.count();
  if (standing_by) {
    spdlog::info("{}", render_standing_by(h, settings_));
    co_return;
  }
  auto seen = co_await store_.arrivals(h.round);
  if (warn_due) {
    last_warning_ = now;
  }
  if (warn_due && seen.live < settings_.min_nodes) {
    spdlog::warn("{}", render_incomplete(h, seen.live, seen.live_named, started_, now,
                                         join_deadline, settings_, !hint_given_));
    hint_given_ = true;
    co_return;
  }
  spdlog::info("{}", render_progress(h, seen.live, seen.live_named, now, join_deadline, settings_));
}

}  // namespace ddprun::rdzv
