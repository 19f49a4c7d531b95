#pragma once
// NVML loaded at run time (dlopen "libnvidia-ml.so.1"): ddprun has no CUDA build or link
// dependency, and a machine without the NVIDIA driver simply has no GPUs.

#include "ddprun/host/gpus.hpp"

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

}  // namespace ddprun::host
