// The NVLink fabric records NVML gives, as bytes, and the domain NVIDIA's rule makes of them.

#include "ddprun/host/fabric.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace ddprun::host {
namespace {

constexpr std::array<unsigned char, 16> k_uuid = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
                                                  0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};

/// Writes uuid, status, clique and state from `base` on, as both layouts order them.
template <std::size_t N>
std::array<unsigned char, N> record(std::size_t base, const std::array<unsigned char, 16>& uuid,
                                    int status, unsigned clique, unsigned char state) {
  std::array<unsigned char, N> out{};
  std::memcpy(out.data() + base, uuid.data(), uuid.size());
  std::memcpy(out.data() + base + 16, &status, sizeof status);
  std::memcpy(out.data() + base + 20, &clique, sizeof clique);
  out[base + 24] = state;
  return out;
}

TEST(Fabric, TheVersionedRecordIsReadAfterItsVersionWord) {
  auto bytes = record<k_fabric_v2_bytes>(4, k_uuid, 0, 7, k_fabric_state_completed);
  const unsigned version = k_fabric_v2_version;
  std::memcpy(bytes.data(), &version, sizeof version);
  const auto info = decode_fabric_v2(bytes);
  EXPECT_EQ(info.cluster_uuid, k_uuid);
  EXPECT_EQ(info.clique_id, 7U);
  EXPECT_EQ(info.status, 0);
  EXPECT_EQ(info.state, k_fabric_state_completed);
  EXPECT_EQ(k_fabric_v2_version, 0x02000024U);  // as nvml.h spells it
}

TEST(Fabric, TheOlderRecordStartsWithTheUuid) {
  const auto bytes = record<k_fabric_legacy_bytes>(0, k_uuid, 0, 3, k_fabric_state_completed);
  const auto info = decode_fabric_legacy(bytes);
  EXPECT_EQ(info.cluster_uuid, k_uuid);
  EXPECT_EQ(info.clique_id, 3U);
  EXPECT_EQ(info.state, k_fabric_state_completed);
}

TEST(Fabric, ADomainIsClusterUuidDotCliqueIdOfAnAttachedGpu) {
  FabricInfo info{k_uuid, 0, 2, k_fabric_state_completed};
  std::string why;
  EXPECT_EQ(fabric_domain(info, why), "12345678-9abc-def0-0123-456789abcdef.2");
  EXPECT_TRUE(why.empty());
}

TEST(Fabric, NoDomainUnlessCompletedSuccessfulAndNonZero) {
  std::string why;
  FabricInfo in_progress{k_uuid, 0, 2, 2};
  EXPECT_FALSE(fabric_domain(in_progress, why));
  EXPECT_EQ(why, "fabric state IN_PROGRESS (2)");
  FabricInfo failed{k_uuid, 3, 2, k_fabric_state_completed};
  EXPECT_FALSE(fabric_domain(failed, why));
  EXPECT_EQ(why, "fabric status 3 (not success)");
  FabricInfo hgx{{}, 0, 0, k_fabric_state_completed};  // a single HGX H100 node
  EXPECT_FALSE(fabric_domain(hgx, why));
  EXPECT_EQ(why, "all-zero ClusterUUID (a node alone)");
  FabricInfo unsupported{k_uuid, 0, 2, 0};
  EXPECT_FALSE(fabric_domain(unsupported, why));
  EXPECT_EQ(why, "fabric state NOT_SUPPORTED (0)");
}

}  // namespace
}  // namespace ddprun::host
