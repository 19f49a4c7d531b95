#pragma once
// The one read scheduler detection needs (PBS_NODEFILE); kept apart from the pure code.

#include "ddprun/util/result.hpp"

#include <cstddef>
#include <string>

namespace ddprun::sched {

/// Largest nodefile read: Gadi-style one line per CPU of 1000 nodes is ~2 MB.
inline constexpr std::size_t k_max_text_file_bytes = 64 * 1024 * 1024;

/// The whole file, or ErrorCode::io naming the path and the OS error; larger than
/// `max_bytes` is an error too.
Result<std::string> read_text_file(const std::string& path,
                                   std::size_t max_bytes = k_max_text_file_bytes);

}  // namespace ddprun::sched
