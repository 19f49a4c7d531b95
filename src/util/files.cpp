#include "ddprun/util/files.hpp"

#include "ddprun/util/strings.hpp"

#include <cerrno>
#include <fstream>
#include <system_error>

namespace ddprun::util {

Result<std::string> read_file_or_error(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return make_error(ErrorCode::io,
                      "open(" + quoted(path) + "): " + std::generic_category().message(err));
  }
  std::string text;
  char buffer[4096];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) {
      return make_error(ErrorCode::io, "read(" + quoted(path) + "): larger than " +
                                           std::to_string(max_bytes) + " bytes");
    }
  }
  if (in.bad()) {
    return make_error(ErrorCode::io, "read(" + quoted(path) + "): I/O error");
  }
  return text;
}

std::optional<std::string> read_file(const std::string& path) {
  auto text = read_file_or_error(path);
  if (!text) {
    return std::nullopt;
  }
  return std::move(*text);
}

}  // namespace ddprun::util
