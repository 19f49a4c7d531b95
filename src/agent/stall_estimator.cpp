#include "ddprun/agent/stall_estimator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ddprun::agent {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds k_sample_interval{1000};
constexpr milliseconds k_min_sample_interval{10};
constexpr int k_floor_samples = 4;        // the floor spans at least this many samples
constexpr double k_notable_change = 0.1;  // a change of 10% or more is logged
constexpr std::int64_t k_ms_per_s = 1000;
constexpr std::int64_t k_s_per_min = 60;
constexpr std::int64_t k_s_per_h = 3600;
constexpr std::int64_t k_seconds_shown = 1000;  // up to this many, a span reads in seconds
constexpr std::int64_t k_tenths_below_ms = 10000;

milliseconds times(double factor, milliseconds d) {
  return milliseconds(std::llround(factor * static_cast<double>(d.count())));
}

std::string seconds_text(milliseconds d) {
  return fmt::format("{:g} s", static_cast<double>(d.count()) / static_cast<double>(k_ms_per_s));
}

}  // namespace

std::optional<StallEstimator> make_stall_estimator(
    const std::optional<config::StallAuto>& settings) {
  if (!settings) {
    return std::nullopt;
  }
  return StallEstimator(*settings);
}

std::string render_span(milliseconds d) {
  const std::int64_t ms = std::max<std::int64_t>(d.count(), 0);
  if (ms < k_tenths_below_ms) {
    constexpr std::int64_t k_tenth = 100;
    return seconds_text(milliseconds((ms + k_tenth / 2) / k_tenth * k_tenth));
  }
  const std::int64_t s = (ms + k_ms_per_s / 2) / k_ms_per_s;
  if (s < k_seconds_shown) {
    return fmt::format("{} s", s);
  }
  if (s < k_s_per_h) {
    return fmt::format("{}m{:02}s", s / k_s_per_min, s % k_s_per_min);
  }
  return fmt::format("{}h{:02}m", s / k_s_per_h, (s % k_s_per_h) / k_s_per_min);
}

bool is_notable_change(const StallTimeout& before, const StallTimeout& after) {
  if (before.basis != after.basis) {
    return true;
  }
  const auto moved = std::abs(after.value.count() - before.value.count());
  return static_cast<double>(moved) >= k_notable_change * static_cast<double>(before.value.count());
}

void StallEstimator::round_started(util::SteadyTime t) {
  if (first_) {
    own_.running += std::chrono::duration_cast<milliseconds>(last_ - *first_);
  }
  first_.reset();
  round_start_ = t;
  last_ = t;
}

void StallEstimator::observe(util::SteadyTime last) {
  if (last <= last_) {
    return;  // nothing new (or progress from before this round)
  }
  const auto since = std::chrono::duration_cast<milliseconds>(last - last_);
  if (!first_) {
    first_ = last;
    own_.startup = std::max(own_.startup.value_or(milliseconds(0)), since);
  } else {
    own_.gap = std::max(own_.gap.value_or(milliseconds(0)), since);
  }
  last_ = last;
}

void StallEstimator::adopt(const rdzv::StallFigures& job) { adopted_ = merge(adopted_, job); }

milliseconds StallEstimator::running_now() const {
  const auto round =
      first_ ? std::chrono::duration_cast<milliseconds>(last_ - *first_) : milliseconds(0);
  return own_.running + round;
}

rdzv::StallFigures StallEstimator::figures() const {
  auto mine = own_;
  mine.running = running_now();
  return merge(mine, adopted_);
}

StallTimeout StallEstimator::current() const {
  const auto f = figures();
  const auto startup = settings_.startup;
  if (!first_) {
    const auto learned = times(settings_.factor, f.startup.value_or(milliseconds(0)));
    return learned > startup ? StallTimeout{learned, StallBasis::startup_learned}
                             : StallTimeout{startup, StallBasis::startup};
  }
  const auto learned = times(settings_.factor, f.gap.value_or(milliseconds(0)));
  if (f.running < startup) {
    return StallTimeout{std::max(startup, learned), StallBasis::learning};
  }
  return learned < settings_.floor ? StallTimeout{settings_.floor, StallBasis::floor}
                                   : StallTimeout{learned, StallBasis::learned};
}

std::string StallEstimator::explain() const {
  const auto f = figures();
  const auto factor = fmt::format("{:g}", settings_.factor);
  const auto gap = f.gap.value_or(milliseconds(0));
  std::string head = "--stall-timeout auto: ";
  switch (current().basis) {
    case StallBasis::startup:
      return head + "the start-up bound (--stall-startup-timeout " +
             seconds_text(settings_.startup) + ") until the first progress";
    case StallBasis::startup_learned:
      return head + factor + " × the longest start-up, " +
             render_span(f.startup.value_or(milliseconds(0)));
    case StallBasis::learning:
      return head + "the start-up bound (--stall-startup-timeout " +
             seconds_text(settings_.startup) + ") until " + render_span(settings_.startup) +
             " of healthy running";
    case StallBasis::learned:
      return head + factor + " × " + render_span(gap);
    case StallBasis::floor:
      return head + "the floor (--stall-timeout-floor " + seconds_text(settings_.floor) +
             "), above " + factor + " × " + render_span(gap);
  }
  return head;
}

std::string StallEstimator::learned_text() const {
  const auto f = figures();
  if (!f.gap) {
    return "";
  }
  return "; longest gap in " + render_span(f.running) +
         " of healthy running: " + render_span(*f.gap);
}

milliseconds StallEstimator::sample_interval() const {
  return std::clamp(settings_.floor / k_floor_samples, k_min_sample_interval, k_sample_interval);
}

}  // namespace ddprun::agent
