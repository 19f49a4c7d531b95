#pragma once
// NVML loaded at run time (dlopen "libnvidia-ml.so.1"): ddprun has no CUDA build or link
// dependency, and a machine without the NVIDIA driver simply has no GPUs.

#include "ddprun/host/gpus.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ddprun::host {

struct NvmlInfo {
  bool loaded = false;                   ///< library found and nvmlInit_v2 succeeded
  std::string failure;                   ///< why not, when !loaded (for a DEBUG line)
  std::vector<host::GpuDevice> devices;  ///< NVML index order
};

/// Opens NVML, lists the devices (uuid and PCI bus id) and shuts it down again. Never throws;
/// any failure gives loaded = false.
NvmlInfo query_nvml();

/// The node's NVLink domain from its GPUs' fabric (fabric.hpp), or why there is none.
struct FabricReading {
  std::optional<std::string> domain;
  std::string detail;  ///< where the domain came from, or why none ("no libnvidia-ml.so.1")
};

/// Opens NVML, reads the GPUs' fabric (nvmlDeviceGetGpuFabricInfoV, else
/// nvmlDeviceGetGpuFabricInfo) and shuts it down again. Never throws.
FabricReading query_fabric();

/// GpuMemorySource over NVML for the GPUs of gpus_in_use(pinned, cuda_visible_devices, NVML's
/// devices). NVML is opened at the first read() and stays open until the source goes; when it
/// cannot be opened, or lists none of those GPUs, every read() says why.
std::unique_ptr<GpuMemorySource> make_nvml_memory_source(
    std::vector<std::optional<std::string>> pinned,
    std::optional<std::string> cuda_visible_devices);

}  // namespace ddprun::host
