// A node whose workers always fail is left out of a c10d job (--rdzv-conf max_node_failures,
// issue #18): a plain member, and the agent that hosts the rendezvous store, which keeps
// serving the others until the job ends. The etcd-v3 case is in etcd_e2e_test.cpp.

#include <gtest/gtest.h>

#include "exclusion_scenario.hpp"

using namespace ddprun::test;
using namespace ddprun::test::multinode;

namespace {

ExclusionJob c10d_job() {
  const int port = free_port();
  return ExclusionJob{
      [port](std::size_t i) {
        return c10d_flags("2:3", port, 1, loopback(static_cast<int>(i)), k_exclusion_conf);
      },
      true,
      {"--rdzv_endpoint", "127.0.0.1:" + std::to_string(port), "--rdzv_id", "mnjob"}};
}

TEST(ExclusionE2E, C10dMemberWhoseWorkersAlwaysFailIsLeftOut) {
  expect_failing_node_left_out(c10d_job(), 2);
}

TEST(ExclusionE2E, C10dStoreHostWhoseWorkersAlwaysFailServesTheOthersUntilTheyFinish) {
  expect_failing_node_left_out(c10d_job(), 0);
}

}  // namespace
