#include "ddprun/agent/stall_watch.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace ddprun::agent {

namespace {

std::string seconds_text(std::chrono::milliseconds d) {
  return fmt::format("{:g}", static_cast<double>(d.count()) / 1000.0);
}

}  // namespace

StallWatch::StallWatch(const config::SupervisorOptions& options, std::string role,
                       const util::Clock& clock, Changed changed)
    : options_(options),
      role_(std::move(role)),
      clock_(clock),
      changed_(std::move(changed)),
      estimator_(make_stall_estimator(options.stall_auto)) {}

std::chrono::milliseconds StallWatch::timeout() const {
  return estimator_ ? estimator_->current().value : options_.stall_timeout;
}

std::optional<rdzv::StallFigures> StallWatch::figures() const {
  return estimator_ ? std::optional(estimator_->figures()) : std::nullopt;
}

void StallWatch::adopt(const rdzv::StallFigures& job) {
  if (estimator_) {
    estimator_->adopt(job);
    note_timeout();
  }
}

void StallWatch::round_started(util::SteadyTime t) {
  reason_.clear();
  if (estimator_) {
    estimator_->round_started(t);
    next_sample_ = t + estimator_->sample_interval();
    note_timeout();
  }
}

util::SteadyTime StallWatch::deadline(const GroupProgress& p) const {
  if (options_.stall_timeout.count() <= 0 || !p.watched) {
    return util::SteadyTime::max();
  }
  return std::max(p.round_started, p.last) + timeout();
}

util::SteadyTime StallWatch::wake_deadline(const GroupProgress& p) const {
  const auto due = deadline(p);
  return estimator_ && due != util::SteadyTime::max() ? std::min(due, next_sample_) : due;
}

bool StallWatch::check(const GroupProgress& p) {
  const auto now = clock_.now();
  if (estimator_) {
    estimator_->observe(p.last);
    next_sample_ = now + estimator_->sample_interval();
    note_timeout();
  }
  if (now < deadline(p)) {
    return false;
  }
  reason_ = render_reason(p);
  stalled_at_ = clock_.wall_now();
  spdlog::error("[{}] {}", role_, reason_);
  return true;
}

std::string StallWatch::render_reason(const GroupProgress& p) const {
  const std::string head = "worker group stalled: no output and no file-timer request for ";
  if (!estimator_) {
    return head + seconds_text(options_.stall_timeout) + " s (--stall-timeout)";
  }
  const bool started = p.last > p.round_started;
  const auto silent = std::chrono::duration_cast<std::chrono::milliseconds>(
      clock_.now() - std::max(p.round_started, p.last));
  return head + render_span(silent) + (started ? "" : " since the workers started") +
         estimator_->learned_text() + " (" + estimator_->explain() + ")";
}

/// Logs the learned timeout (and tells the hook) when it changed notably: not per sample.
void StallWatch::note_timeout() {
  const auto now = estimator_->current();
  if (logged_ && !is_notable_change(*logged_, now)) {
    return;
  }
  logged_ = now;
  const auto why = estimator_->explain() + estimator_->learned_text();
  spdlog::info("[{}] stall timeout: {} ({})", role_, render_span(now.value), why);
  if (changed_) {
    changed_(now.value, why);
  }
}

}  // namespace ddprun::agent
