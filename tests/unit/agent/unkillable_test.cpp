#include "ddprun/agent/unkillable.hpp"

#include <gtest/gtest.h>

namespace ddprun::agent {
namespace {

using namespace std::chrono_literals;

StuckWorker stuck(int local_rank, int rank, pid_t pid, process::ProcessState state) {
  WorkerRanks r;
  r.local_rank = local_rank;
  r.rank = rank;
  return StuckWorker{r, pid, std::move(state)};
}

TEST(Unkillable, AStuckWorkerIsNamedWithItsPidStateAndWaitChannel) {
  EXPECT_EQ(render_stuck(stuck(1, 3, 4242, {'D', "__refrigerator"}), 5s),
            "local rank 1 (rank 3, pid 4242) is still alive 5 s after SIGKILL: state D "
            "(uninterruptible sleep), waiting in the kernel at __refrigerator; it cannot be "
            "killed (a hung GPU driver or file system?)");
  EXPECT_EQ(render_stuck(stuck(0, 0, 7, {'?', ""}), 5s),
            "local rank 0 (rank 0, pid 7) is still alive 5 s after SIGKILL: state ? (unknown); "
            "it cannot be killed (a hung GPU driver or file system?)")
      << "no wait channel told: none named";
}

TEST(Unkillable, TheVerdictIsUnhealthyAndNamesTheFirstAndHowManyMore) {
  EXPECT_TRUE(unkillable_verdict({}, 5s).healthy);
  const auto v = unkillable_verdict(
      {stuck(0, 4, 10, {'D', "nfs_wait_bit_killable"}), stuck(1, 5, 11, {'D', ""})}, 5s);
  EXPECT_FALSE(v.healthy);
  EXPECT_EQ(v.reason.rfind("local rank 0 (rank 4, pid 10) is still alive", 0), 0U) << v.reason;
  EXPECT_NE(v.reason.find("nfs_wait_bit_killable"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("(and 1 more worker(s))"), std::string::npos) << v.reason;
}

}  // namespace
}  // namespace ddprun::agent
