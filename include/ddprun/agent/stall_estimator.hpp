#pragma once
// The learned stall timeout (`--stall-timeout auto[:FACTOR]`, docs/reliability.md): pure, fed
// samples of the workers' last progress (output or a file-timer request) and the job-wide
// figures the rendezvous combines; it says which timeout applies now and why.
//
// Phases of a round, each with its timeout:
//   start-up  round started, no progress yet: the start-up bound, or FACTOR x the longest
//             start-up seen if that is longer (a restart's start-up may reload a checkpoint)
//   learning  progress made, but less than the start-up bound of healthy running in all:
//             the start-up bound (it covers a first eval or checkpoint while the gaps are
//             learned)
//   learned   FACTOR x the longest gap seen, at least the floor
// Figures only grow: the longest gap is never blended down (ft_launcher blends with alpha 0.5;
// a stall timeout that fell below a gap the job came through healthy would stop it at the next
// such gap), and a restart keeps them; the start-up is measured apart from the gaps.
//
// Sampling: the supervisor samples every sample_interval(). A gap is measured from the last
// progress of one sample to the latest of the next in which progress came, so it reads up to
// one interval long: the error is on the safe side.

#include "ddprun/config/launch_config.hpp"
#include "ddprun/rdzv/stall_figures.hpp"
#include "ddprun/util/clock.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace ddprun::agent {

/// Which rule gives the timeout now.
enum class StallBasis { startup, startup_learned, learning, learned, floor };

struct StallTimeout {
  std::chrono::milliseconds value{0};
  StallBasis basis = StallBasis::startup;
  bool operator==(const StallTimeout&) const = default;
};

class StallEstimator {
 public:
  explicit StallEstimator(config::StallAuto settings) : settings_(settings) {}

  /// A round's workers started at `t`: the start-up clock restarts; the figures stay.
  void round_started(util::SteadyTime t);
  /// A sample: the workers' last progress is `last` (the epoch, or before the round's start:
  /// none in this round).
  void observe(util::SteadyTime last);
  /// The job's figures (the maximum over the round's members, this node's included).
  void adopt(const rdzv::StallFigures& job);

  /// What was learned: this node's figures merged with what it adopted.
  rdzv::StallFigures figures() const;
  StallTimeout current() const;
  /// "--stall-timeout auto: 5 x 58 s": how current() came about.
  std::string explain() const;
  /// "; longest gap in 2h05m of healthy running: 58 s" (or "" before any gap closed).
  std::string learned_text() const;
  /// How often the supervisor samples: 1 s, or a quarter of the floor when that is shorter.
  std::chrono::milliseconds sample_interval() const;

 private:
  std::chrono::milliseconds running_now() const;

  config::StallAuto settings_;
  rdzv::StallFigures own_;      ///< measured here (running: finished rounds only)
  rdzv::StallFigures adopted_;  ///< the job's, as the rendezvous last said
  util::SteadyTime round_start_{};
  std::optional<util::SteadyTime> first_;  ///< this round's first progress
  util::SteadyTime last_{};                ///< this round's latest progress seen
};

/// An estimator for `auto` (nullopt: a fixed timeout or none).
std::optional<StallEstimator> make_stall_estimator(
    const std::optional<config::StallAuto>& settings);

/// A span as a person reads it: "0.3 s", "58 s", "12m30s", "2h05m".
std::string render_span(std::chrono::milliseconds d);
/// Whether going from `before` to `after` is worth a log line: the basis changed or the value
/// moved by at least 10%.
bool is_notable_change(const StallTimeout& before, const StallTimeout& after);

}  // namespace ddprun::agent
