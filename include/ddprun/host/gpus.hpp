#pragma once
// CUDA_VISIBLE_DEVICES as the CUDA runtime reads it.

#include "ddprun/util/result.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::host {

/// The usable entries of a CUDA_VISIBLE_DEVICES value, in order: non-negative integers,
/// `GPU-<uuid>` and `MIG-<uuid>` (also the old `MIG-GPU-<uuid>/gi/ci`). Like CUDA, reading stops
/// at the first invalid entry (a negative number, an empty item, any other text), so "0,-1,2"
/// is one device. An empty value means no GPU, not all of them.
std::vector<std::string> visible_device_entries(std::string_view cuda_visible_devices);

/// visible_device_entries(...).size().
int count_visible_devices(std::string_view cuda_visible_devices);

/// One GPU as NVML lists it (NVML index order = PCI bus order).
struct GpuDevice {
  std::string uuid;        ///< "GPU-..." ; may be empty
  std::string pci_bus_id;  ///< sysfs form "0000:3b:00.0"; may be empty
};

/// How many GPUs this node has for --nproc-per-node gpu|auto, and which source said so.
struct GpuCount {
  int count = 0;
  std::string source;  ///< "CUDA_VISIBLE_DEVICES", "NVML" or "no NVML"

  friend bool operator==(const GpuCount&, const GpuCount&) = default;
};

/// CUDA_VISIBLE_DEVICES when set (an empty value is zero GPUs), else NVML's device count;
/// no NVML (library missing or nvmlInit failing) means zero GPUs, not an error.
GpuCount decide_gpu_count(const std::optional<std::string>& cuda_visible_devices,
                          std::optional<int> nvml_count);

/// The device entry local rank `local_rank` uses: the local_rank-th entry of
/// CUDA_VISIBLE_DEVICES, or str(local_rank) when the variable is unset; nullopt when the list
/// is shorter than that.
std::optional<std::string> device_for_local_rank(
    const std::optional<std::string>& cuda_visible_devices, int local_rank);

/// The device of local rank `local_rank` under --virtual-local-rank, by torch's rule
/// (local_elastic_agent.py `_set_local_rank_env`): the local_rank-th comma-separated item of the
/// inherited CUDA_VISIBLE_DEVICES, whitespace trimmed and otherwise as written (integers,
/// GPU-/MIG- uuids), or str(local_rank) when the variable is unset; nullopt when the list has
/// fewer items (torch raises ValueError at the start of the workers).
std::optional<std::string> virtual_device_for_local_rank(
    const std::optional<std::string>& cuda_visible_devices, int local_rank);

/// The PCI bus id of a CUDA_VISIBLE_DEVICES entry among NVML's devices: an integer is an NVML
/// index (CUDA numbers devices the same way with CUDA_DEVICE_ORDER=PCI_BUS_ID, and on
/// homogeneous nodes by default), GPU-<uuid> matches a device whose uuid starts with it (CUDA
/// accepts unique prefixes). nullopt when nothing matches (MIG entries, unknown ids).
std::optional<std::string> pci_bus_id_of(std::string_view entry,
                                         const std::vector<GpuDevice>& devices);

/// The NVML index of a CUDA_VISIBLE_DEVICES entry, by pci_bus_id_of's rules; nullopt when
/// nothing (or more than one device, for a uuid prefix) matches.
std::optional<std::size_t> nvml_index_of(std::string_view entry,
                                         const std::vector<GpuDevice>& devices);

/// The NVML indices of the GPUs a node's workers use, sorted and unique: each worker's own
/// device where it was given one (`pinned`, per local rank: --pin-gpus, --virtual-local-rank),
/// else every entry of the inherited CUDA_VISIBLE_DEVICES (every device when it is unset).
/// Entries NVML does not list (MIG instances, unknown ids) are left out.
std::vector<std::size_t> gpus_in_use(const std::vector<std::optional<std::string>>& pinned,
                                     const std::optional<std::string>& cuda_visible_devices,
                                     const std::vector<GpuDevice>& devices);

/// One GPU's memory use, as NVML reports it.
struct GpuMemory {
  std::size_t index = 0;  ///< NVML index
  std::string uuid;       ///< may be empty
  std::uint64_t used_bytes = 0;
  friend bool operator==(const GpuMemory&, const GpuMemory&) = default;
};

/// Where the agent reads the memory use of its workers' GPUs (NVML in production, nvml.hpp).
class GpuMemorySource {
 public:
  virtual ~GpuMemorySource() = default;
  /// Every GPU the workers use, now; an error when that cannot be known (no NVML, no GPU).
  virtual Result<std::vector<GpuMemory>> read() = 0;
};

}  // namespace ddprun::host
