// Hot spares on etcd-v3 (#27 §3): the scenarios of spares_scenario.hpp against a real etcd on
// loopback.

#include <gtest/gtest.h>

#include "spares_scenario.hpp"
#include "support/etcd_cluster.hpp"

using namespace ddprun::test;
using namespace ddprun::test::multinode;

namespace {

class EtcdSparesE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    DDPRUN_SKIP_WITHOUT_ETCD();
    ASSERT_EQ(cluster_.start(), "");
  }
  SpareJob job(const std::string& id) const {
    const std::string endpoints = cluster_.endpoints();
    return SpareJob{[endpoints, id](std::size_t i) {
                      return etcd_flags("2:2", endpoints, id, static_cast<int>(i));
                    },
                    false,
                    {"--rdzv_backend", "etcd-v3", "--rdzv_endpoint", endpoints, "--rdzv_id", id}};
  }
  EtcdCluster cluster_;
};

TEST_F(EtcdSparesE2E, SpareTakesThePlaceOfANodeThatKeepsFailing) {
  expect_spare_replaces_failing_node(job("spare-fail"));
}

TEST_F(EtcdSparesE2E, SpareTakesThePlaceOfAKilledAgent) {
  expect_spare_replaces_killed_node(job("spare-kill"));
}

}  // namespace
