#pragma once
// A GPU's NVLink fabric as NVML reports it, and the node domain it gives (spec/schedulers.md,
// Appendix). Pure: the NVML shell (nvml.cpp) hands the struct's bytes in.
//
// NVIDIA's validity rule (go-nvlib IsFabricAttached): state COMPLETED, status SUCCESS and a
// non-zero ClusterUUID. A single HGX node reports COMPLETED/SUCCESS with an all-zero UUID: it is
// a node alone, not one domain with every other HGX node. The domain is named as NVIDIA's tools
// name it, "<ClusterUUID>.<CliqueId>" (GPU Operator label nvidia.com/gpu.clique).

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace ddprun::host {

inline constexpr unsigned char k_fabric_state_completed = 3;  ///< NVML_GPU_FABRIC_STATE_COMPLETED
inline constexpr std::size_t k_fabric_legacy_bytes = 28;      ///< sizeof(nvmlGpuFabricInfo_t)
inline constexpr std::size_t k_fabric_v2_bytes = 36;          ///< sizeof(nvmlGpuFabricInfo_v2_t)
/// NVML_STRUCT_VERSION(GpuFabricInfo, 2): the size, version 2 in the top byte.
inline constexpr unsigned k_fabric_v2_version = k_fabric_v2_bytes | (2U << 24U);

struct FabricInfo {
  std::array<unsigned char, 16> cluster_uuid{};
  int status = 0;  ///< an nvmlReturn_t, meaningful only when state is COMPLETED
  unsigned clique_id = 0;
  unsigned char state = 0;  ///< 0 not supported, 1 not started, 2 in progress, 3 completed
};

/// nvmlGpuFabricInfo_t (nvmlDeviceGetGpuFabricInfo): uuid @0, status @16, clique @20, state @24.
FabricInfo decode_fabric_legacy(std::span<const unsigned char, k_fabric_legacy_bytes> bytes);
/// nvmlGpuFabricInfoV_t v2 or v3 (nvmlDeviceGetGpuFabricInfoV): version @0, uuid @4,
/// status @20, clique @24, state @28.
FabricInfo decode_fabric_v2(std::span<const unsigned char, k_fabric_v2_bytes> bytes);

/// "<uuid>.<clique>" for a GPU in a multi-node NVLink domain; nullopt otherwise, with `why`
/// set to the reason ("fabric state IN_PROGRESS", "all-zero ClusterUUID (a node alone)").
std::optional<std::string> fabric_domain(const FabricInfo& info, std::string& why);

/// The 16 bytes as 8-4-4-4-12 lower-case hex.
std::string render_uuid(const std::array<unsigned char, 16>& uuid);

}  // namespace ddprun::host
