#include "ddprun/host/gpus.hpp"

#include "ddprun/util/strings.hpp"

#include <algorithm>

namespace ddprun::host {

namespace {

bool is_valid_entry(std::string_view entry) {
  if (util::starts_with(entry, "GPU-") || util::starts_with(entry, "MIG-")) {
    return entry.size() > 4;
  }
  return !entry.empty() && entry.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

std::vector<std::string> visible_device_entries(std::string_view cuda_visible_devices) {
  std::vector<std::string> entries;
  if (util::trim(cuda_visible_devices).empty()) {
    return entries;
  }
  for (const auto& item : util::split(cuda_visible_devices, ',')) {
    const auto entry = util::trim(item);
    if (!is_valid_entry(entry)) {
      break;  // CUDA ignores everything from the first invalid entry on
    }
    entries.emplace_back(entry);
  }
  return entries;
}

int count_visible_devices(std::string_view cuda_visible_devices) {
  return static_cast<int>(visible_device_entries(cuda_visible_devices).size());
}

GpuCount decide_gpu_count(const std::optional<std::string>& cuda_visible_devices,
                          std::optional<int> nvml_count) {
  if (cuda_visible_devices) {
    return {count_visible_devices(*cuda_visible_devices), "CUDA_VISIBLE_DEVICES"};
  }
  if (nvml_count) {
    return {std::max(0, *nvml_count), "NVML"};
  }
  return {0, "no NVML"};
}

std::optional<std::string> device_for_local_rank(
    const std::optional<std::string>& cuda_visible_devices, int local_rank) {
  if (local_rank < 0) {
    return std::nullopt;
  }
  if (!cuda_visible_devices) {
    return std::to_string(local_rank);
  }
  auto entries = visible_device_entries(*cuda_visible_devices);
  const auto idx = static_cast<std::size_t>(local_rank);
  if (idx >= entries.size()) {
    return std::nullopt;
  }
  return entries[idx];
}

std::optional<std::string> virtual_device_for_local_rank(
    const std::optional<std::string>& cuda_visible_devices, int local_rank) {
  if (local_rank < 0) {
    return std::nullopt;
  }
  if (!cuda_visible_devices) {
    return std::to_string(local_rank);
  }
  auto items = util::split(*cuda_visible_devices, ',');
  const auto idx = static_cast<std::size_t>(local_rank);
  if (idx >= items.size()) {
    return std::nullopt;
  }
  return std::string(util::trim(items[idx]));
}

std::optional<std::size_t> nvml_index_of(std::string_view entry,
                                         const std::vector<GpuDevice>& devices) {
  std::optional<std::size_t> found;
  if (util::starts_with(entry, "GPU-")) {
    for (std::size_t i = 0; i < devices.size(); ++i) {
      if (util::starts_with(devices[i].uuid, entry)) {
        if (found) {
          return std::nullopt;  // an ambiguous prefix names no device
        }
        found = i;
      }
    }
  } else if (auto index = util::parse_int_in(entry, 0, 1 << 16)) {
    if (static_cast<std::size_t>(*index) < devices.size()) {
      found = static_cast<std::size_t>(*index);
    }
  }
  return found;
}

std::optional<std::string> pci_bus_id_of(std::string_view entry,
                                         const std::vector<GpuDevice>& devices) {
  auto index = nvml_index_of(entry, devices);
  if (!index || devices[*index].pci_bus_id.empty()) {
    return std::nullopt;
  }
  return devices[*index].pci_bus_id;
}

std::vector<std::size_t> gpus_in_use(const std::vector<std::optional<std::string>>& pinned,
                                     const std::optional<std::string>& cuda_visible_devices,
                                     const std::vector<GpuDevice>& devices) {
  std::vector<std::string> entries;
  bool all = false;
  for (const auto& own : pinned) {
    if (own) {
      entries.push_back(*own);
    } else if (cuda_visible_devices) {
      auto inherited = visible_device_entries(*cuda_visible_devices);
      entries.insert(entries.end(), inherited.begin(), inherited.end());
    } else {
      all = true;
    }
  }
  std::vector<std::size_t> out;
  for (std::size_t i = 0; all && i < devices.size(); ++i) {
    out.push_back(i);
  }
  for (const auto& e : entries) {
    if (auto index = nvml_index_of(e, devices)) {
      out.push_back(*index);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace ddprun::host
