#pragma once
// CUDA_VISIBLE_DEVICES as the CUDA runtime reads it.

#include <string>
#include <string_view>
#include <vector>

namespace ddprun::sched {

/// The usable entries of a CUDA_VISIBLE_DEVICES value, in order: non-negative integers,
/// `GPU-<uuid>` and `MIG-<uuid>` (also the old `MIG-GPU-<uuid>/gi/ci`). Like CUDA, reading stops
/// at the first invalid entry (a negative number, an empty item, any other text), so "0,-1,2"
/// is one device. An empty value means no GPU, not all of them.
std::vector<std::string> visible_device_entries(std::string_view cuda_visible_devices);

/// visible_device_entries(...).size().
int count_visible_devices(std::string_view cuda_visible_devices);

}  // namespace ddprun::sched
