// The NVML shell: the few entry points ddprun needs, declared here instead of taken from
// nvml.h. Every NVML call returns nvmlReturn_t, an enum whose success value is 0.

#include "ddprun/host/nvml.hpp"

#include "ddprun/host/fabric.hpp"

#include <dlfcn.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <functional>
#include <utility>

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
using MemoryFn = int (*)(NvmlDevice, void*);
using FabricFn = int (*)(NvmlDevice, void*);

struct Api {
  InitFn init = nullptr;
  ShutdownFn shutdown = nullptr;
  CountFn count = nullptr;
  HandleFn handle = nullptr;
  UuidFn uuid = nullptr;             // optional
  PciFn pci = nullptr;               // optional
  MemoryFn memory = nullptr;         // optional: the GPU-memory wait needs it
  FabricFn fabric_v = nullptr;       // optional: CUDA 12.4+ drivers
  FabricFn fabric_legacy = nullptr;  // optional: CUDA 12.0+ drivers, deprecated in 13.0
};

/// nvmlMemory_t (v1): total, free and used bytes.
struct NvmlMemory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
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
  api.memory = symbol<MemoryFn>(lib, "nvmlDeviceGetMemoryInfo");
  api.fabric_v = symbol<FabricFn>(lib, "nvmlDeviceGetGpuFabricInfoV");
  api.fabric_legacy = symbol<FabricFn>(lib, "nvmlDeviceGetGpuFabricInfo");
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

/// One GPU's fabric record: the versioned call first, then the older one; nullopt with `why`
/// when neither answers.
std::optional<FabricInfo> read_fabric(const Api& api, NvmlDevice dev, std::string& why) {
  // Larger than either struct, so a driver writing a newer version stays inside the buffer.
  alignas(8) std::array<unsigned char, 128> buf{};
  if (api.fabric_v != nullptr) {
    const unsigned version = k_fabric_v2_version;
    std::memcpy(buf.data(), &version, sizeof version);
    const int rc = api.fabric_v(dev, buf.data());
    if (rc == k_nvml_success) {
      return decode_fabric_v2(
          std::span<const unsigned char, k_fabric_v2_bytes>(buf.data(), k_fabric_v2_bytes));
    }
    why = "nvmlDeviceGetGpuFabricInfoV returned " + std::to_string(rc);
  }
  buf.fill(0);
  if (api.fabric_legacy == nullptr) {
    why = why.empty() ? "the driver's NVML has no GPU fabric calls" : why;
    return std::nullopt;
  }
  if (int rc = api.fabric_legacy(dev, buf.data()); rc != k_nvml_success) {
    why = "nvmlDeviceGetGpuFabricInfo returned " + std::to_string(rc);
    return std::nullopt;
  }
  return decode_fabric_legacy(
      std::span<const unsigned char, k_fabric_legacy_bytes>(buf.data(), k_fabric_legacy_bytes));
}

/// The first GPU's domain that NVML reports valid; else why GPU 0 has none.
FabricReading fabric_of_devices(const Api& api) {
  FabricReading out;
  unsigned count = 0;
  if (api.count(&count) != k_nvml_success || count == 0) {
    out.detail = "NVML lists no GPU";
    return out;
  }
  for (unsigned i = 0; i < count && i < k_max_devices; ++i) {
    NvmlDevice dev = nullptr;
    std::string why;
    if (api.handle == nullptr || api.handle(i, &dev) != k_nvml_success) {
      why = "no handle";
    } else if (auto info = read_fabric(api, dev, why)) {
      if (auto domain = fabric_domain(*info, why)) {
        out.domain = *domain;
        out.detail = "NVML fabric of GPU " + std::to_string(i) + " (ClusterUUID.CliqueId)";
        return out;
      }
    }
    if (i == 0) {
      out.detail = "GPU 0: " + why;
    }
  }
  return out;
}

/// Why NVML could not be used: `found` is false when the library is not there at all.
struct NvmlFailure {
  bool found = false;
  std::string why;
};

/// Opens NVML, runs `work` between nvmlInit_v2 and nvmlShutdown and closes the library again;
/// nullopt when `work` ran.
std::optional<NvmlFailure> with_nvml(const std::function<void(const Api&)>& work) {
  void* lib = dlopen(k_nvml_library, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return NvmlFailure{false,
                       std::string("dlopen(") + k_nvml_library + "): " + (why ? why : "failed")};
  }
  std::optional<NvmlFailure> failed;
  const Api api = load_api(lib);
  if (api.init == nullptr || api.shutdown == nullptr || api.count == nullptr) {
    failed =
        NvmlFailure{true, std::string(k_nvml_library) + " lacks nvmlInit_v2/nvmlDeviceGetCount_v2"};
  } else if (int rc = api.init(); rc != k_nvml_success) {
    failed = NvmlFailure{true, "nvmlInit_v2 returned " + std::to_string(rc)};
  } else {
    work(api);
    api.shutdown();
  }
  dlclose(lib);
  return failed;
}

/// NVML opened once for reading memory use; the library is closed with it.
class NvmlMemorySource final : public GpuMemorySource {
 public:
  NvmlMemorySource(std::vector<std::optional<std::string>> pinned,
                   std::optional<std::string> visible)
      : pinned_(std::move(pinned)), visible_(std::move(visible)) {}
  ~NvmlMemorySource() override {
    if (initialized_) {
      api_.shutdown();
    }
    if (lib_ != nullptr) {
      dlclose(lib_);
    }
  }
  NvmlMemorySource(const NvmlMemorySource&) = delete;
  NvmlMemorySource& operator=(const NvmlMemorySource&) = delete;

  Result<std::vector<GpuMemory>> read() override {
    if (!opened_) {
      opened_ = true;
      failure_ = open();
    }
    if (!failure_.empty()) {
      return make_error(ErrorCode::io, failure_);
    }
    std::vector<GpuMemory> out;
    for (const auto& gpu : gpus_) {
      NvmlMemory m{};
      if (int rc = api_.memory(gpu.handle, &m); rc != k_nvml_success) {
        return make_error(ErrorCode::io, "nvmlDeviceGetMemoryInfo(GPU " +
                                             std::to_string(gpu.memory.index) + ") returned " +
                                             std::to_string(rc));
      }
      out.push_back(gpu.memory);
      out.back().used_bytes = m.used;
    }
    return out;
  }

 private:
  struct Gpu {
    NvmlDevice handle = nullptr;
    GpuMemory memory;
  };

  /// Loads NVML and finds the workers' GPUs; "" on success, else why not.
  std::string open() {
    lib_ = dlopen(k_nvml_library, RTLD_NOW | RTLD_LOCAL);
    if (lib_ == nullptr) {
      const char* why = dlerror();
      return std::string("dlopen(") + k_nvml_library + "): " + (why ? why : "failed");
    }
    api_ = load_api(lib_);
    if (api_.init == nullptr || api_.shutdown == nullptr || api_.count == nullptr ||
        api_.handle == nullptr || api_.memory == nullptr) {
      return std::string(k_nvml_library) + " lacks an entry point the GPU-memory wait needs";
    }
    if (int rc = api_.init(); rc != k_nvml_success) {
      return "nvmlInit_v2 returned " + std::to_string(rc);
    }
    initialized_ = true;
    NvmlInfo info;
    list_devices(api_, info);
    for (auto index : gpus_in_use(pinned_, visible_, info.devices)) {
      Gpu gpu;
      gpu.memory.index = index;
      gpu.memory.uuid = info.devices[index].uuid;
      if (api_.handle(static_cast<unsigned>(index), &gpu.handle) == k_nvml_success) {
        gpus_.push_back(gpu);
      }
    }
    return gpus_.empty() ? "NVML lists none of the workers' GPUs" : "";
  }

  std::vector<std::optional<std::string>> pinned_;
  std::optional<std::string> visible_;
  void* lib_ = nullptr;
  Api api_;
  bool opened_ = false;
  bool initialized_ = false;
  std::string failure_;
  std::vector<Gpu> gpus_;
};

}  // namespace

std::unique_ptr<GpuMemorySource> make_nvml_memory_source(
    std::vector<std::optional<std::string>> pinned,
    std::optional<std::string> cuda_visible_devices) {
  return std::make_unique<NvmlMemorySource>(std::move(pinned), std::move(cuda_visible_devices));
}

FabricReading query_fabric() {
  FabricReading out;
  const auto failed = with_nvml([&](const Api& api) { out = fabric_of_devices(api); });
  if (failed) {
    out.detail = failed->found ? failed->why : std::string("no ") + k_nvml_library;
  }
  return out;
}

NvmlInfo query_nvml() {
  NvmlInfo out;
  if (auto failed = with_nvml([&](const Api& api) { list_devices(api, out); })) {
    out.failure = failed->why;
  }
  return out;
}

}  // namespace ddprun::host
