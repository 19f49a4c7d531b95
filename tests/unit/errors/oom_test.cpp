#include "ddprun/errors/oom.hpp"

#include <gtest/gtest.h>

#include <csignal>

namespace ddprun::errors {
namespace {

TEST(ParseOomKillCount, ReadsCgroupV2Events) {
  EXPECT_EQ(parse_oom_kill_count("low 0\nhigh 0\nmax 3\noom 2\noom_kill 2\noom_group_kill 0\n"),
            2U);
}

TEST(ParseOomKillCount, ReadsCgroupV1OomControl) {
  EXPECT_EQ(parse_oom_kill_count("oom_kill_disable 0\nunder_oom 0\noom_kill 5\n"), 5U);
}

TEST(ParseOomKillCount, AbsentWhenNoLine) {
  EXPECT_FALSE(parse_oom_kill_count("oom 2\noom_group_kill 1\n").has_value());
  EXPECT_FALSE(parse_oom_kill_count("oom_kill x\n").has_value());
  EXPECT_FALSE(parse_oom_kill_count("").has_value());
}

TEST(MemoryCgroupFiles, FindsV2AndV1Paths) {
  auto v2 = memory_cgroup_files("0::/user.slice/job\n");
  ASSERT_EQ(v2.size(), 2U);
  EXPECT_EQ(v2[0], "/sys/fs/cgroup/user.slice/job/memory.events");
  EXPECT_EQ(v2[1], "/sys/fs/cgroup/memory.events");
  auto v1 = memory_cgroup_files("5:cpu,cpuacct:/a\n4:memory:/x/y\n0::/\n");
  ASSERT_EQ(v1.size(), 3U);
  EXPECT_EQ(v1[0], "/sys/fs/cgroup/memory/x/y/memory.oom_control");
  EXPECT_EQ(v1[1], "/sys/fs/cgroup/memory/memory.oom_control");
  EXPECT_EQ(v1[2], "/sys/fs/cgroup/memory.events");
}

TEST(OomSuspected, OnlyForSigkillWithARisingCounter) {
  OomCounters before{1, 10};
  OomCounters cgroup_rose{2, 10};
  OomCounters system_rose{std::nullopt, 11};
  OomCounters same{1, 10};
  EXPECT_TRUE(oom_suspected(-SIGKILL, before, cgroup_rose));
  EXPECT_TRUE(oom_suspected(-SIGKILL, before, OomCounters{1, 11}));
  EXPECT_FALSE(oom_suspected(-SIGKILL, before, same));
  EXPECT_FALSE(oom_suspected(-SIGSEGV, before, cgroup_rose));
  EXPECT_FALSE(oom_suspected(137, before, cgroup_rose));
  EXPECT_FALSE(oom_suspected(-SIGKILL, OomCounters{}, system_rose));
}

}  // namespace
}  // namespace ddprun::errors
