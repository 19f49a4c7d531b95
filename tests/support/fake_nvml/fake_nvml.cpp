// A stand-in libnvidia-ml.so.1 for tests on machines without GPUs: ddprun dlopens it through
// LD_LIBRARY_PATH. FAKE_NVML_GPUS (default 2) sets the device count, FAKE_NVML_INIT_RC a
// non-zero nvmlInit_v2 result (init failure). Device i has uuid GPU-fake-<i> and PCI bus
// 0000:<FAKE_NVML_BUS_BASE + i>:00.0 (hex; default base 0x3b).
// Memory use (nvmlDeviceGetMemoryInfo): FAKE_NVML_MEMORY_FILE names a file whose line i is
// "<used MiB> [<seconds>]" for device i (the last line stands for the devices after it); with
// <seconds>, the memory is free (0 used) that long after the file was last written, so a test
// scripts memory that falls after a while or never does. No variable or no file: 0 used.

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

int nvmlDeviceGetMemoryInfo(void* device, Memory* memory) {
  memory->total = k_total;
  memory->used = used_bytes(index_of(device));
  memory->free = k_total - memory->used;
  return 0;
}

}  // extern "C"
