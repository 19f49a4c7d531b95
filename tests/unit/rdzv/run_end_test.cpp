#include "ddprun/rdzv/run_end.hpp"

#include "ddprun/rdzv/crash_loop.hpp"
#include "ddprun/rdzv/decide.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"

namespace ddprun::rdzv {
namespace {

using namespace std::chrono_literals;

RdzvSettings job42() {
  RdzvSettings s = test::settings(1, 2);
  s.run_id = "job42";
  s.keep_alive_interval = 5s;
  s.keep_alive_max_attempt = 3;
  return s;
}

/// A wall time today at hh:mm:ss local time.
WallMs at_clock(int hh, int mm, int ss) {
  std::time_t now = std::time(nullptr);
  std::tm parts{};
  localtime_r(&now, &parts);
  parts.tm_hour = hh;
  parts.tm_min = mm;
  parts.tm_sec = ss;
  return static_cast<WallMs>(std::mktime(&parts)) * 1000;
}

TEST(RunEnd, AClosedHeaderSaysHowTheRunEnded) {
  EXPECT_FALSE(run_end_of(test::complete(2, 2))) << "still running";
  auto finished = with_closed(test::complete(2, 2), true, 7000);
  EXPECT_EQ(run_end_of(*finished), (RunEnd{7000, true, ""}));
  auto failed = with_closed(test::complete(2, 2), false, 8000);
  EXPECT_EQ(run_end_of(*failed), (RunEnd{8000, false, ""}));
  RoundHeader stopped = *finished;
  stopped.stop_reason = "the last 3 attempts failed the same way";
  EXPECT_EQ(run_end_of(stopped), (RunEnd{7000, false, "the last 3 attempts failed the same way"}))
      << "a stop is never a finish";
}

TEST(RunEnd, TheRecordRoundTrips) {
  const RunEnd end{1765000000123, true, ""};
  auto back = decode_run_end(encode_run_end(end));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, end);
  EXPECT_EQ(decode_run_end("{").error().code, ErrorCode::protocol);
  EXPECT_EQ(decode_run_end("{\"at\":1}").error().code, ErrorCode::protocol);
}

TEST(RunEnd, ANodeSilentPastTheBoundWasDropped) {
  const auto s = job42();  // bound 15 s
  EXPECT_FALSE(dropped_at(std::nullopt, 100'000, s)) << "never beat";
  EXPECT_FALSE(dropped_at(100'000, 115'000, s)) << "at the bound, not past it";
  EXPECT_EQ(dropped_at(100'000, 140'000, s), 115'000);
}

TEST(RunEnd, EachEndTellsAReturningMemberHowToExit) {
  const auto s = job42();
  const WallMs end_at = at_clock(12, 3, 40);
  const WallMs dropped = at_clock(12, 0, 15);
  auto finished = render_run_end(RunEnd{end_at, true, ""}, s, dropped);
  EXPECT_EQ(finished.code, ErrorCode::finished_without);
  EXPECT_EQ(finished.message,
            "rendezvous job42: the job finished at 12:03:40 without this node (it was dropped at "
            "12:00:15: no keep-alive of it reached the store for 15s)");
  auto failed = render_run_end(RunEnd{end_at, false, ""}, s, std::nullopt);
  EXPECT_EQ(failed.code, ErrorCode::closed);
  EXPECT_EQ(failed.message,
            "rendezvous job42: the job ended without success at 12:03:40 (its workers failed, or "
            "it was shut down), without this node");
  auto stopped = render_run_end(RunEnd{end_at, false, "a crash loop"}, s, dropped);
  EXPECT_EQ(stopped.code, ErrorCode::given_up);
  EXPECT_EQ(stopped.message.rfind("rendezvous job42 stopped at 12:03:40 (it was dropped", 0), 0U)
      << stopped.message;
  EXPECT_EQ(render_run_end(RunEnd{0, true, ""}, s, std::nullopt).message,
            "rendezvous job42: the job finished without this node")
      << "no time recorded: none said";
}

TEST(RunEnd, AGoneRunOrStoreIsSaidAsSuchWithExitOne) {
  const auto s = job42();
  auto gone = render_run_gone(s, std::nullopt);
  EXPECT_EQ(gone.code, ErrorCode::closed);
  EXPECT_NE(gone.message.find("no record says how it ended"), std::string::npos) << gone.message;
  const Error refused{ErrorCode::io, "store: connect on 10.0.0.1:29400: Connection refused"};
  auto host_exited = render_store_gone(refused, s, std::nullopt);
  EXPECT_EQ(host_exited.code, ErrorCode::closed);
  EXPECT_NE(host_exited.message.find("the agent that hosted the store has exited, because the "
                                     "job ended or because that agent failed"),
            std::string::npos)
      << host_exited.message;
  const Error silent{ErrorCode::io, "store: connect on 10.0.0.1:29400: timed out"};
  EXPECT_NE(render_store_gone(silent, s, std::nullopt).message.find("its host does not answer"),
            std::string::npos);
}

}  // namespace
}  // namespace ddprun::rdzv
