#include "ddprun/host/fabric.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace ddprun::host {
namespace {

constexpr std::size_t k_uuid_bytes = 16;
constexpr int k_nvml_success = 0;

template <typename T, std::size_t N>
T read_at(std::span<const unsigned char, N> bytes, std::size_t offset) {
  T value{};
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

template <std::size_t N>
FabricInfo decode_at(std::span<const unsigned char, N> bytes, std::size_t base) {
  FabricInfo info;
  std::memcpy(info.cluster_uuid.data(), bytes.data() + base, k_uuid_bytes);
  info.status = read_at<int>(bytes, base + k_uuid_bytes);
  info.clique_id = read_at<unsigned>(bytes, base + k_uuid_bytes + 4);
  info.state = bytes[base + k_uuid_bytes + 8];
  return info;
}

const char* state_name(unsigned char state) {
  switch (state) {
    case 0:
      return "NOT_SUPPORTED";
    case 1:
      return "NOT_STARTED";
    case 2:
      return "IN_PROGRESS";
    case k_fabric_state_completed:
      return "COMPLETED";
    default:
      return "unknown";
  }
}

}  // namespace

FabricInfo decode_fabric_legacy(std::span<const unsigned char, k_fabric_legacy_bytes> bytes) {
  return decode_at(bytes, 0);
}

FabricInfo decode_fabric_v2(std::span<const unsigned char, k_fabric_v2_bytes> bytes) {
  return decode_at(bytes, sizeof(unsigned));
}

std::optional<std::string> fabric_domain(const FabricInfo& info, std::string& why) {
  if (info.state != k_fabric_state_completed) {
    why = std::string("fabric state ") + state_name(info.state) + " (" +
          std::to_string(info.state) + ")";
    return std::nullopt;
  }
  if (info.status != k_nvml_success) {
    why = "fabric status " + std::to_string(info.status) + " (not success)";
    return std::nullopt;
  }
  if (std::all_of(info.cluster_uuid.begin(), info.cluster_uuid.end(),
                  [](unsigned char b) { return b == 0; })) {
    why = "all-zero ClusterUUID (a node alone)";
    return std::nullopt;
  }
  return render_uuid(info.cluster_uuid) + "." + std::to_string(info.clique_id);
}

std::string render_uuid(const std::array<unsigned char, 16>& uuid) {
  std::string out;
  for (std::size_t i = 0; i < uuid.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) {
      out += '-';
    }
    char hex[3];
    (void)std::snprintf(hex, sizeof hex, "%02x", uuid[i]);
    out += hex;
  }
  return out;
}

}  // namespace ddprun::host
