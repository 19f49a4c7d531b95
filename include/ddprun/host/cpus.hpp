#pragma once
// Linux CPU lists ("0-3,8-11", as in Cpus_allowed_list or /sys/.../cpulist) and an even split
// of an affinity mask between local workers.

#include "ddprun/util/result.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::host {

/// Highest CPU number accepted (Linux's NR_CPUS ceiling is 8192; leave room).
inline constexpr int k_max_cpu_id = 65535;

/// "0-3,8-11" -> [0,1,2,3,8,9,10,11], in the order written. Surrounding whitespace (the
/// trailing newline of a /sys file) is ignored; "" gives []. Rejects lo > hi, non-digits,
/// ids above k_max_cpu_id and the "a-b:stride/group" form with one line naming the text.
Result<std::vector<int>> parse_cpu_list(std::string_view text);

/// Splits `cpus` into `nproc` contiguous runs of even size; the first size % nproc workers get
/// one CPU more. With fewer CPUs than workers, worker i gets {cpus[i % size]} (shared).
/// nproc <= 0 or no CPUs gives [].
std::vector<std::vector<int>> split_cpus_for_workers(const std::vector<int>& cpus, int nproc);

/// The warning for an inherited affinity mask with fewer CPUs than workers, or nullopt when
/// there are enough. Under Slurm ("slurm") it names srun's remedies.
std::optional<std::string> small_cpu_mask_warning(int cpu_count, int nproc,
                                                  std::string_view scheduler);

}  // namespace ddprun::host
