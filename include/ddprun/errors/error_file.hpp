#pragma once
// Error files on disk: reading a worker's TORCHELASTIC_ERROR_FILE and writing the agent's
// own one (spec torchrun.md §6.1, §6.4). Rendering is pure; read/write are thin shells.

#include "ddprun/errors/failure.hpp"
#include "ddprun/util/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ddprun::errors {

/// Environment variable naming a process's error file.
inline constexpr std::string_view k_error_file_env = "TORCHELASTIC_ERROR_FILE";

/// A §6.1 record: {"message": {"message": m, "extraInfo": {"py_callstack": s,
/// "timestamp": "<ts>"}[, "errorCode": c]}}; errorCode is left out when 0.
std::string render_error_record(std::string_view message, std::string_view callstack,
                                std::int64_t timestamp, int error_code);

/// What the agent writes to its own error file for the root cause: the worker's JSON with
/// "errorCode" inserted into a dict message when the exit code is non-zero (torchrun), or,
/// when the worker left no valid file, a §6.1 record of our own (a ddprun addition).
std::string render_parent_error_file(const ProcessFailure& root);

/// Reads a worker's error file: nullopt when it does not exist, an error naming the path
/// when it cannot be read or parsed.
std::optional<Result<ErrorRecord>> read_error_file(const std::string& path);

/// Replaces `path` with `text` (an existing file is removed first, as torchrun does).
Result<void> write_error_file(const std::string& path, std::string_view text);

/// `record` (an error file's JSON) with extraInfo.<key> = value added to its "message" object
/// (or, for the string form, a top-level key); `record` unchanged when it is not JSON.
std::string add_extra_info(const std::string& record, const std::string& key,
                           const std::string& value);

/// render_parent_error_file + write_error_file.
Result<void> write_parent_error_file(const std::string& path, const ProcessFailure& root);

}  // namespace ddprun::errors
