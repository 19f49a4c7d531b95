#pragma once
// Reading a whole file: /proc and sysfs entries, token and password files, error files.

#include "ddprun/util/result.hpp"

#include <cstddef>
#include <limits>
#include <optional>
#include <string>

namespace ddprun::util {

/// The whole file as bytes, or ErrorCode::io naming the path and the OS error
/// ("open('/x'): No such file or directory"); a file larger than `max_bytes` is an error too.
Result<std::string> read_file_or_error(
    const std::string& path, std::size_t max_bytes = std::numeric_limits<std::size_t>::max());

/// The whole file as bytes; nullopt when it cannot be opened or read.
std::optional<std::string> read_file(const std::string& path);

}  // namespace ddprun::util
