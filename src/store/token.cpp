#include "ddprun/store/token.hpp"

#include "ddprun/util/files.hpp"
#include "ddprun/util/strings.hpp"

#include <fmt/format.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace ddprun::store {
namespace {

/// Larger files are not tokens (a mistaken path to a data file).
constexpr std::size_t k_max_token_file_bytes = 64 * 1024;

Error file_error(const std::string& path, const std::string& what) {
  return make_error(ErrorCode::config,
                    fmt::format("rendezvous token file {}: {}", util::quoted(path), what));
}

Result<std::string> read_token_file(const std::string& path, const std::string& origin) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return file_error(path, std::strerror(errno));  // NOLINT(concurrency-mt-unsafe)
  }
  if (!S_ISREG(st.st_mode)) {
    return file_error(path, "not a regular file");
  }
  if (auto problem = token_mode_problem(path, static_cast<unsigned>(st.st_mode))) {
    return make_error(ErrorCode::config, *problem);
  }
  if (static_cast<std::size_t>(st.st_size) > k_max_token_file_bytes) {
    return file_error(path, fmt::format("larger than {} bytes", k_max_token_file_bytes));
  }
  auto text = util::read_file(path);
  if (!text) {
    return file_error(path, "cannot be read");
  }
  return normalize_token(*text, origin + " " + util::quoted(path));
}

}  // namespace

Result<std::optional<std::string>> load_token(const TokenSource& source) {
  switch (source.kind) {
    case TokenKind::none:
      return std::optional<std::string>();
    case TokenKind::env: {
      auto token = normalize_token(source.value, source.origin);
      if (!token) {
        return token.error();
      }
      return std::optional<std::string>(*token);
    }
    case TokenKind::job_file: {
      struct stat st {};
      if (::stat(source.path.c_str(), &st) != 0 && errno == ENOENT) {
        return std::optional<std::string>();
      }
      auto secret = read_token_file(source.path, source.origin);
      if (!secret) {
        return secret.error();
      }
      return std::optional<std::string>(derive_job_token(*secret, source.job_id));
    }
    case TokenKind::file:
      break;
  }
  auto token = read_token_file(source.path, source.origin);
  if (!token) {
    return token.error();
  }
  return std::optional<std::string>(*token);
}

void use_rdzv_auth(ClientOptions& options, const std::optional<std::string>& token) {
  options.auth = token ? AuthMode::token : AuthMode::probe;
  options.token = token.value_or(std::string());
}

}  // namespace ddprun::store
