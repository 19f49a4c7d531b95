#include "ddprun/sched/gpus.hpp"

#include "ddprun/util/strings.hpp"

namespace ddprun::sched {

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

}  // namespace ddprun::sched
