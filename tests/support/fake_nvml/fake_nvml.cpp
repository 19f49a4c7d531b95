// A stand-in libnvidia-ml.so.1 for tests on machines without GPUs: ddprun dlopens it through
// LD_LIBRARY_PATH. FAKE_NVML_GPUS (default 2) sets the device count, FAKE_NVML_INIT_RC a
// non-zero nvmlInit_v2 result (init failure). Device i has uuid GPU-fake-<i> and PCI bus
// 0000:<FAKE_NVML_BUS_BASE + i>:00.0 (hex; default base 0x3b).
// Memory use (nvmlDeviceGetMemoryInfo): FAKE_NVML_MEMORY_FILE names a file whose line i is
// "<used MiB> [<seconds>]" for device i (the last line stands for the devices after it); with
// <seconds>, the memory is free (0 used) that long after the file was last written, so a test
// scripts memory that falls after a while or never does. No variable or no file: 0 used.
// NVLink fabric (nvmlDeviceGetGpuFabricInfoV, nvmlDeviceGetGpuFabricInfo): FAKE_NVML_FABRIC is
// "<ClusterUUID as 32 hex digits>:<CliqueId>[:<state>[:<status>]]" (state 3 COMPLETED and
// status 0 by default), the same for every device; unset: NVML_ERROR_NOT_SUPPORTED, as on a GPU
// before Hopper. FAKE_NVML_FABRIC_API=legacy makes the versioned call NOT_FOUND, so only the
// older one answers.

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

struct PciInfo {  // nvmlPciInfo_t v3
  char bus_id_legacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pci_device_id;
  unsigned pci_sub_system_id;
  char bus_id[32];
};

// Device i's handle points at g_device_index[i], which holds i (NVML handles are opaque).
constexpr int k_nvml_invalid_argument = 2;  // NVML_ERROR_INVALID_ARGUMENT
unsigned g_device_index[64];

unsigned index_of(void* device) { return *static_cast<const unsigned*>(device); }

struct Memory {  // nvmlMemory_t v1
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

constexpr unsigned long long k_mib = 1024ULL * 1024ULL;
constexpr unsigned long long k_total = 80ULL * 1024ULL * k_mib;

/// Device `index`'s used bytes from FAKE_NVML_MEMORY_FILE (see the top of the file).
unsigned long long used_bytes(unsigned index) {
  const char* path = std::getenv("FAKE_NVML_MEMORY_FILE");
  struct stat st {};
  if (path == nullptr || ::stat(path, &st) != 0) {
    return 0;
  }
  std::ifstream in(path);
  std::string line;
  std::string chosen;
  for (unsigned i = 0; std::getline(in, line); ++i) {
    chosen = line;
    if (i == index) {
      break;
    }
  }
  std::istringstream words(chosen);
  unsigned long long mib = 0;
  long long seconds = -1;
  words >> mib >> seconds;
  if (seconds >= 0 && std::time(nullptr) >= st.st_mtime + seconds) {
    return 0;
  }
  return mib * k_mib;
}

constexpr int k_nvml_not_supported = 3;        // NVML_ERROR_NOT_SUPPORTED
constexpr int k_nvml_function_not_found = 13;  // NVML_ERROR_FUNCTION_NOT_FOUND
constexpr int k_nvml_version_mismatch = 25;    // NVML_ERROR_ARGUMENT_VERSION_MISMATCH

struct Fabric {
  unsigned char uuid[16];
  int status;
  unsigned clique;
  unsigned char state;
};

/// FAKE_NVML_FABRIC parsed; false when unset or malformed.
bool scripted_fabric(Fabric& f) {
  const char* text = std::getenv("FAKE_NVML_FABRIC");
  if (text == nullptr || std::strlen(text) < 33 || text[32] != ':') {
    return false;
  }
  for (int i = 0; i < 16; ++i) {
    char byte[3] = {text[2 * i], text[2 * i + 1], '\0'};
    f.uuid[i] = static_cast<unsigned char>(std::strtoul(byte, nullptr, 16));
  }
  unsigned state = 3;
  int status = 0;
  f.clique = 0;
  (void)std::sscanf(text + 33, "%u:%u:%d", &f.clique, &state, &status);
  f.state = static_cast<unsigned char>(state);
  f.status = status;
  return true;
}

/// Writes the record at `base`: uuid, status, clique, state (both layouts share the order).
void put_fabric(unsigned char* out, std::size_t base, const Fabric& f) {
  std::memcpy(out + base, f.uuid, 16);
  std::memcpy(out + base + 16, &f.status, sizeof f.status);
  std::memcpy(out + base + 20, &f.clique, sizeof f.clique);
  out[base + 24] = f.state;
}

}  // namespace

extern "C" {

int nvmlInit_v2() { return env_int("FAKE_NVML_INIT_RC", 0); }

int nvmlShutdown() { return 0; }

int nvmlDeviceGetCount_v2(unsigned* count) {
  *count = static_cast<unsigned>(env_int("FAKE_NVML_GPUS", 2));
  return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
  if (index >= std::size(g_device_index)) {
    return k_nvml_invalid_argument;
  }
  g_device_index[index] = index;
  *device = &g_device_index[index];
  return 0;
}

int nvmlDeviceGetUUID(void* device, char* uuid, unsigned length) {
  (void)std::snprintf(uuid, length, "GPU-fake-%u", index_of(device));
  return 0;
}

int nvmlDeviceGetPciInfo_v3(void* device, PciInfo* info) {
  std::memset(info, 0, sizeof *info);
  info->bus = static_cast<unsigned>(env_int("FAKE_NVML_BUS_BASE", 0x3b)) + index_of(device);
  (void)std::snprintf(info->bus_id, sizeof info->bus_id, "00000000:%02X:00.0", info->bus);
  return 0;
}

int nvmlDeviceGetGpuFabricInfoV(void* /*device*/, unsigned char* info) {
  const char* api = std::getenv("FAKE_NVML_FABRIC_API");
  if (api != nullptr && std::strcmp(api, "legacy") == 0) {
    return k_nvml_function_not_found;
  }
  unsigned version = 0;
  std::memcpy(&version, info, sizeof version);
  if (version != (36U | (2U << 24U)) && version != (40U | (3U << 24U))) {
    return k_nvml_version_mismatch;
  }
  Fabric f{};
  if (!scripted_fabric(f)) {
    return k_nvml_not_supported;
  }
  put_fabric(info, 4, f);
  return 0;
}

int nvmlDeviceGetGpuFabricInfo(void* /*device*/, unsigned char* info) {
  Fabric f{};
  if (!scripted_fabric(f)) {
    return k_nvml_not_supported;
  }
  std::memset(info, 0, 28);
  put_fabric(info, 0, f);
  return 0;
}

int nvmlDeviceGetMemoryInfo(void* device, Memory* memory) {
  memory->total = k_total;
  memory->used = used_bytes(index_of(device));
  memory->free = k_total - memory->used;
  return 0;
}

}  // extern "C"
