// Topology-aware node ranks (#42) on c10d and on etcd-v3 (a real etcd on loopback): the
// scenarios of segment_scenario.hpp.

#include <gtest/gtest.h>

#include "segment_scenario.hpp"
#include "support/etcd_cluster.hpp"

using namespace ddprun::test;
using namespace ddprun::test::multinode;

namespace {

SegmentJob c10d_job(const std::string& id) { return multinode::c10d_job("4:4", id); }

TEST(SegmentE2E, C10dDomainsABABGetConsecutiveRanks) {
  expect_domains_get_consecutive_ranks(c10d_job("seg-abab"));
}

TEST(SegmentE2E, C10dADomainWithoutAWholeSegmentStandsByAndExitsZero) {
  expect_a_domain_without_a_whole_segment_stands_by(c10d_job("seg-acbab"));
}

TEST(SegmentE2E, C10dALostNodeIsReplacedOnlyByAWaitingNodeOfItsDomain) {
  expect_a_lost_node_replaced_only_from_its_domain(c10d_job("seg-kill"));
}

class EtcdSegmentE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    DDPRUN_SKIP_WITHOUT_ETCD();
    ASSERT_EQ(cluster_.start(), "");
  }
  SegmentJob job(const std::string& id) const { return etcd_job("4:4", cluster_.endpoints(), id); }
  EtcdCluster cluster_;
};

TEST_F(EtcdSegmentE2E, DomainsABABGetConsecutiveRanks) {
  expect_domains_get_consecutive_ranks(job("seg-abab"));
}

TEST_F(EtcdSegmentE2E, ADomainWithoutAWholeSegmentStandsByAndExitsZero) {
  expect_a_domain_without_a_whole_segment_stands_by(job("seg-acbab"));
}

TEST_F(EtcdSegmentE2E, ALostNodeIsReplacedOnlyByAWaitingNodeOfItsDomain) {
  expect_a_lost_node_replaced_only_from_its_domain(job("seg-kill"));
}

}  // namespace
