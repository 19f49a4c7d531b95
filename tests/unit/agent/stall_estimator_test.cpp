// The learned stall timeout, fed progress with known gap patterns on a made-up time line.

#include "ddprun/agent/stall_estimator.hpp"

#include <gtest/gtest.h>

namespace ddprun::agent {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

/// A worker on a time line: the estimator samples every second, as the supervisor does.
class Worker {
 public:
  explicit Worker(config::StallAuto settings = {}) : est(settings) { est.round_started(start); }

  /// `for_how_long` of output every `every`.
  void steady(milliseconds every, milliseconds for_how_long) {
    for (milliseconds t{0}; t < for_how_long; t += every) {
      silent(every);
      print();
    }
  }
  /// Nothing for `d`, sampled as the supervisor would (the timeout must hold all along).
  void silent(milliseconds d) {
    for (milliseconds t{0}; t < d; t += 1s) {
      now += std::min<milliseconds>(1s, d - t);
      est.observe(last);
      longest_timeout_seen = std::max(longest_timeout_seen, est.current().value);
      EXPECT_LE(now - std::max(start, last), est.current().value)
          << "a healthy silence would have stalled";
    }
  }
  void print() {
    last = now;
    est.observe(last);
  }
  void restart() {
    now += 10s;
    start = now;
    est.round_started(start);
  }

  util::SteadyTime now = util::SteadyTime{} + 24h;
  util::SteadyTime start = now;  ///< the round's
  util::SteadyTime last{};
  StallEstimator est;
  milliseconds longest_timeout_seen{0};
};

TEST(StallEstimator, StartsWithTheStartUpBoundUntilTheFirstProgress) {
  Worker w;
  EXPECT_EQ(w.est.current(), (StallTimeout{1800s, StallBasis::startup}));
  EXPECT_EQ(w.est.explain(),
            "--stall-timeout auto: the start-up bound (--stall-startup-timeout 1800 s) until the "
            "first progress");
  w.silent(20min);  // importing torch, loading a checkpoint
  w.print();
  EXPECT_EQ(w.est.figures().startup, milliseconds(20min));
  EXPECT_FALSE(w.est.figures().gap.has_value()) << "the start-up is not a gap";
  EXPECT_EQ(w.est.current().basis, StallBasis::learning);
}

TEST(StallEstimator, SteadyOutputSettlesOnTheFloor) {
  Worker w;
  w.print();
  w.steady(2s, 29min);
  EXPECT_EQ(w.est.current(), (StallTimeout{1800s, StallBasis::learning}));
  w.steady(2s, 2min);
  EXPECT_EQ(w.est.figures().gap, milliseconds(2s));
  EXPECT_EQ(w.est.current(), (StallTimeout{60s, StallBasis::floor}));
  EXPECT_EQ(w.est.explain(),
            "--stall-timeout auto: the floor (--stall-timeout-floor 60 s), above 5 × 2 s");
}

TEST(StallEstimator, BurstyOutputLearnsFactorTimesTheLongestGap) {
  Worker w;
  w.silent(1s);
  w.print();
  for (int burst = 0; burst < 70; ++burst) {
    w.steady(1s, 5s);  // a burst of log lines
    w.silent(37s);     // an optimizer step that prints nothing
    w.print();
  }
  EXPECT_EQ(w.est.figures().gap, milliseconds(37s));
  EXPECT_EQ(w.est.current(), (StallTimeout{185s, StallBasis::learned}));
  EXPECT_EQ(w.est.explain(), "--stall-timeout auto: 5 × 37 s");
  EXPECT_EQ(w.est.learned_text(), "; longest gap in 49m00s of healthy running: 37 s");
}

TEST(StallEstimator, ALongEvalBeforeTheEstimateSettlesIsCoveredAndLearned) {
  Worker w;
  w.print();
  w.steady(1s, 10min);
  w.silent(15min);  // evaluation: no output, still within the start-up bound
  w.print();
  w.steady(1s, 10min);
  EXPECT_EQ(w.est.current(), (StallTimeout{75min, StallBasis::learned}));
  w.steady(1s, 1h);  // an hour of short gaps does not make the eval forgotten
  EXPECT_EQ(w.est.current().value, milliseconds(75min));
  w.silent(15min);  // the next eval passes
  w.print();
  EXPECT_EQ(w.est.current().value, milliseconds(75min));
}

TEST(StallEstimator, ARestartKeepsWhatWasLearnedAndTimesItsStartUpApart) {
  Worker w;
  w.silent(100s);
  w.print();
  w.steady(1s, 31min);
  w.silent(30s);
  w.print();
  const auto learned = w.est.current();
  EXPECT_EQ(learned, (StallTimeout{150s, StallBasis::learned}));
  w.restart();
  EXPECT_EQ(w.est.current(), (StallTimeout{1800s, StallBasis::startup}));
  w.silent(7min);  // a longer start-up (the checkpoint is loaded now): still no gap
  w.print();
  EXPECT_EQ(w.est.figures().startup, milliseconds(7min));
  EXPECT_EQ(w.est.figures().gap, milliseconds(30s));
  EXPECT_EQ(w.est.current(), learned)
      << "the first progress goes straight back to the learned value";
  w.restart();
  EXPECT_EQ(w.est.current(), (StallTimeout{35min, StallBasis::startup_learned}));
  EXPECT_EQ(w.est.explain(), "--stall-timeout auto: 5 × the longest start-up, 420 s");
}

TEST(StallEstimator, TheJobsFiguresRaiseButNeverLowerIt) {
  Worker w;
  w.print();
  w.steady(1s, 31min);
  EXPECT_EQ(w.est.current().value, milliseconds(60s));
  w.est.adopt(rdzv::StallFigures{10s, 40s, 2h});  // another node saw a 40 s gap
  EXPECT_EQ(w.est.current(), (StallTimeout{200s, StallBasis::learned}));
  w.est.adopt(rdzv::StallFigures{1s, 1s, 1s});  // a newcomer that knows little
  EXPECT_EQ(w.est.current().value, milliseconds(200s));
  EXPECT_EQ(w.est.figures().running, milliseconds(2h));
}

TEST(StallEstimator, AdoptedRunningSettlesANodeThatJustJoined) {
  Worker w;
  w.print();
  w.steady(1s, 1min);
  EXPECT_EQ(w.est.current().basis, StallBasis::learning);
  w.est.adopt(rdzv::StallFigures{20s, 30s, 3h});
  EXPECT_EQ(w.est.current(), (StallTimeout{150s, StallBasis::learned}));
}

TEST(StallEstimator, FactorAndBoundsComeFromTheSettings) {
  Worker w(config::StallAuto{2.5, 3s, 2s});
  w.print();
  w.steady(200ms, 4s);
  w.silent(1500ms);
  w.print();
  EXPECT_EQ(w.est.current(), (StallTimeout{3750ms, StallBasis::learned}));
  EXPECT_EQ(w.est.explain(), "--stall-timeout auto: 2.5 × 1.5 s");
  EXPECT_EQ(w.est.sample_interval(), 500ms);
}

TEST(StallEstimator, ProgressFromBeforeTheRoundIsNotThisRounds) {
  Worker w;
  w.print();
  w.restart();
  w.est.observe(w.last);  // the previous round's last output
  EXPECT_EQ(w.est.current().basis, StallBasis::startup);
}

TEST(StallEstimator, SamplesEverySecondOrAQuarterOfASmallFloor) {
  EXPECT_EQ(StallEstimator(config::StallAuto{}).sample_interval(), 1s);
  EXPECT_EQ(StallEstimator(config::StallAuto{5, 1s, 200ms}).sample_interval(), 50ms);
  EXPECT_EQ(StallEstimator(config::StallAuto{5, 1s, 1ms}).sample_interval(), 10ms);
}

TEST(StallSpan, ReadsAsAPersonWouldWriteIt) {
  EXPECT_EQ(render_span(300ms), "0.3 s");
  EXPECT_EQ(render_span(2040ms), "2 s");
  EXPECT_EQ(render_span(58s), "58 s");
  EXPECT_EQ(render_span(312s), "312 s");
  EXPECT_EQ(render_span(750s + 1min), "810 s");
  EXPECT_EQ(render_span(1000s), "16m40s");
  EXPECT_EQ(render_span(2h + 5min + 20s), "2h05m");
}

TEST(StallChange, LogsOnlyABasisChangeOrTenPercent) {
  const StallTimeout a{100s, StallBasis::learned};
  EXPECT_FALSE(is_notable_change(a, StallTimeout{109s, StallBasis::learned}));
  EXPECT_TRUE(is_notable_change(a, StallTimeout{110s, StallBasis::learned}));
  EXPECT_TRUE(is_notable_change(a, StallTimeout{100s, StallBasis::floor}));
}

}  // namespace
}  // namespace ddprun::agent
