// The NVML shell: the few entry points ddprun needs, declared here instead of taken from
// nvml.h. Every NVML call returns nvmlReturn_t, an enum whose success value is 0.

#include "ddprun/host/nvml.hpp"

#include <dlfcn.h>

#include <array>
#include <cstdio>
#include <cstring>

namespace ddprun::host {

namespace {

constexpr const char* k_nvml_library = "libnvidia-ml.so.1";
constexpr int k_nvml_success = 0;
constexpr unsigned k_max_devices = 64;
constexpr std::size_t k_uuid_bytes = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE is 96
// nvmlPciInfo_t (v3): char busIdLegacy[16]; unsigned domain, bus, device, pciDeviceId,
// pciSubSystemId; char busId[32]. A larger buffer than the struct keeps a future, longer
// version from writing past it; only the three fields below are read.
constexpr std::size_t k_pci_info_bytes = 256;
constexpr std::size_t k_pci_domain_offset = 16;

using NvmlDevice = void*;
using InitFn = int (*)();
using ShutdownFn = int (*)();
using CountFn = int (*)(unsigned*);
using HandleFn = int (*)(unsigned, NvmlDevice*);
using UuidFn = int (*)(NvmlDevice, char*, unsigned);
using PciFn = int (*)(NvmlDevice, void*);

struct Api {
  InitFn init = nullptr;
  ShutdownFn shutdown = nullptr;
  CountFn count = nullptr;
  HandleFn handle = nullptr;
  UuidFn uuid = nullptr;  // optional
  PciFn pci = nullptr;    // optional
};

template <typename Fn>
Fn symbol(void* lib, const char* name) {
  return reinterpret_cast<Fn>(dlsym(lib, name));
}

Api load_api(void* lib) {
  Api api;
  api.init = symbol<InitFn>(lib, "nvmlInit_v2");
  api.shutdown = symbol<ShutdownFn>(lib, "nvmlShutdown");
  api.count = symbol<CountFn>(lib, "nvmlDeviceGetCount_v2");
  api.handle = symbol<HandleFn>(lib, "nvmlDeviceGetHandleByIndex_v2");
  api.uuid = symbol<UuidFn>(lib, "nvmlDeviceGetUUID");
  api.pci = symbol<PciFn>(lib, "nvmlDeviceGetPciInfo_v3");
  return api;
}

std::string pci_bus_id(const Api& api, NvmlDevice dev) {
  alignas(8) std::array<unsigned char, k_pci_info_bytes> info{};
  if (api.pci == nullptr || api.pci(dev, info.data()) != k_nvml_success) {
    return "";
  }
  std::array<unsigned, 3> dbd{};  // domain, bus, device
  std::memcpy(dbd.data(), info.data() + k_pci_domain_offset, sizeof dbd);
  char text[32];
  (void)std::snprintf(text, sizeof text, "%04x:%02x:%02x.0", dbd[0] & 0xffffU, dbd[1] & 0xffU,
                      dbd[2] & 0xffU);
  return text;
}

host::GpuDevice describe(const Api& api, unsigned index) {
  host::GpuDevice d;
  NvmlDevice dev = nullptr;
  if (api.handle == nullptr || api.handle(index, &dev) != k_nvml_success) {
    return d;
  }
  std::array<char, k_uuid_bytes> uuid{};
  if (api.uuid != nullptr && api.uuid(dev, uuid.data(), uuid.size()) == k_nvml_success) {
    d.uuid = uuid.data();
  }
  d.pci_bus_id = pci_bus_id(api, dev);
  return d;
}

void list_devices(const Api& api, NvmlInfo& out) {
  unsigned count = 0;
  if (api.count(&count) != k_nvml_success) {
    out.failure = "nvmlDeviceGetCount_v2 failed";
    return;
  }
  out.loaded = true;
  for (unsigned i = 0; i < count && i < k_max_devices; ++i) {
    out.devices.push_back(describe(api, i));
  }
}

}  // namespace

NvmlInfo query_nvml() {
  NvmlInfo out;
  void* lib = dlopen(k_nvml_library, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    out.failure = std::string("dlopen(") + k_nvml_library + "): " + (why ? why : "failed");
    return out;
  }
  const Api api = load_api(lib);
  if (api.init == nullptr || api.shutdown == nullptr || api.count == nullptr) {
    out.failure = std::string(k_nvml_library) + " lacks nvmlInit_v2/nvmlDeviceGetCount_v2";
  } else if (int rc = api.init(); rc != k_nvml_success) {
    out.failure = "nvmlInit_v2 returned " + std::to_string(rc);
  } else {
    list_devices(api, out);
    api.shutdown();
  }
  dlclose(lib);
  return out;
}

}  // namespace ddprun::host
