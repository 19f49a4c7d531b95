// CUDA_VISIBLE_DEVICES counting, CPU lists, worker CPU splits and port derivation.

#include "ddprun/host/cpus.hpp"
#include "ddprun/host/gpus.hpp"

#include <gtest/gtest.h>

namespace ddprun::host {
namespace {

using Cpus = std::vector<int>;

TEST(VisibleDevices, CountsIntegers) {
  EXPECT_EQ(count_visible_devices("0,1,2,3"), 4);
  EXPECT_EQ(count_visible_devices("3"), 1);
  EXPECT_EQ(count_visible_devices(" 1 , 0 "), 2);
}

TEST(VisibleDevices, EmptyMeansZeroNotAll) {
  EXPECT_EQ(count_visible_devices(""), 0);
  EXPECT_EQ(count_visible_devices("  "), 0);
}

TEST(VisibleDevices, CountsGpuAndMigUuids) {
  EXPECT_EQ(count_visible_devices("GPU-8932f937-d72c-4106-c12f-20bd9faed9f6,"
                                  "GPU-0f2e1d6b-9a2a-6c6b-2f4e-1b2c3d4e5f60"),
            2);
  EXPECT_EQ(count_visible_devices("MIG-4c1f5a2e-8f8e-5b7b-9d3a-0a1b2c3d4e5f"), 1);
  EXPECT_EQ(count_visible_devices("MIG-GPU-8932f937-d72c-4106-c12f-20bd9faed9f6/1/0"), 1);
  EXPECT_EQ(visible_device_entries("0,GPU-ab"), (std::vector<std::string>{"0", "GPU-ab"}));
}

TEST(VisibleDevices, StopsAtTheFirstInvalidEntryLikeCuda) {
  EXPECT_EQ(count_visible_devices("0,-1,2"), 1);
  EXPECT_EQ(count_visible_devices("-1"), 0);
  EXPECT_EQ(count_visible_devices("0,1,"), 2);
  EXPECT_EQ(count_visible_devices("0,,1"), 1);
  EXPECT_EQ(count_visible_devices("0,NoDevFiles"), 1);
  EXPECT_EQ(count_visible_devices("GPU-"), 0);
}

TEST(CpuList, ParsesRangesAndSingles) {
  EXPECT_EQ(*parse_cpu_list("0-3,8-11"), (Cpus{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(*parse_cpu_list("5"), Cpus{5});
  EXPECT_EQ(*parse_cpu_list("0,2,4-5\n"), (Cpus{0, 2, 4, 5}));
  EXPECT_EQ(*parse_cpu_list(""), Cpus{});
}

TEST(CpuList, RejectsMalformedText) {
  for (const char* text : {"3-1", "a", "0-", "-1", "0,,1", "0-7:2/4", "70000"}) {
    auto r = parse_cpu_list(text);
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_NE(r.error().message.find("cpu list '"), std::string::npos) << r.error().message;
  }
}

TEST(CpuSplit, EvenContiguousRuns) {
  const Cpus cpus{0, 1, 2, 3, 8, 9, 10, 11};
  EXPECT_EQ(split_cpus_for_workers(cpus, 2), (std::vector<Cpus>{{0, 1, 2, 3}, {8, 9, 10, 11}}));
  EXPECT_EQ(split_cpus_for_workers(cpus, 4), (std::vector<Cpus>{{0, 1}, {2, 3}, {8, 9}, {10, 11}}));
}

TEST(CpuSplit, RemainderGoesToTheFirstWorkers) {
  EXPECT_EQ(split_cpus_for_workers({0, 1, 2, 3, 4}, 3), (std::vector<Cpus>{{0, 1}, {2, 3}, {4}}));
}

TEST(CpuSplit, FewerCpusThanWorkersShareRoundRobin) {
  EXPECT_EQ(split_cpus_for_workers({4, 5}, 3), (std::vector<Cpus>{{4}, {5}, {4}}));
}

TEST(CpuSplit, NoWorkersOrNoCpusGiveNothing) {
  EXPECT_TRUE(split_cpus_for_workers({0, 1}, 0).empty());
  EXPECT_TRUE(split_cpus_for_workers({}, 4).empty());
}

}  // namespace
}  // namespace ddprun::host
