#include "ddprun/output/log_dir.hpp"

#include "ddprun/util/strings.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

namespace ddprun::output {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view k_temp_prefix = "torchelastic_";
constexpr std::string_view k_suffix_alphabet = "abcdefghijklmnopqrstuvwxyz0123456789_";
constexpr std::size_t k_suffix_length = 8;  // Python tempfile's length
constexpr int k_mkdtemp_attempts = 100;

std::string random_suffix(std::mt19937& rng) {
  std::uniform_int_distribution<std::size_t> pick(0, k_suffix_alphabet.size() - 1);
  std::string out;
  for (std::size_t i = 0; i < k_suffix_length; ++i) {
    out += k_suffix_alphabet[pick(rng)];
  }
  return out;
}

// Python's tempfile.mkdtemp(prefix=..., dir=...): a new 0700 directory.
Result<std::string> make_temp_dir(const std::string& parent, std::string_view prefix) {
  std::mt19937 rng(std::random_device{}());
  for (int i = 0; i < k_mkdtemp_attempts; ++i) {
    auto path = parent + "/" + std::string(prefix) + random_suffix(rng);
    if (::mkdir(path.c_str(), 0700) == 0) {
      return path;
    }
    if (errno != EEXIST) {
      return make_error(ErrorCode::io, "mkdir(" + path + "): " + std::strerror(errno));
    }
  }
  return make_error(ErrorCode::io, "could not create a unique directory in " + parent);
}

Result<std::string> ensure_base_dir(std::string_view log_dir, const std::string& temp_root) {
  if (log_dir.empty()) {
    auto dir = make_temp_dir(temp_root, k_temp_prefix);
    if (!dir) {
      return make_error(ErrorCode::io, "TMPDIR " + temp_root +
                                           ": cannot create the log directory in it (" +
                                           dir.error().message + ")");
    }
    return dir;
  }
  std::string base(log_dir);
  std::error_code ec;
  if (fs::exists(base, ec) && !fs::is_directory(base, ec)) {
    return make_error(ErrorCode::config, util::quoted(base) + ": expected a directory, not a file");
  }
  fs::create_directories(base, ec);
  if (ec) {
    return make_error(
        ErrorCode::config,
        util::quoted(base) + ": expected a directory that can be created (" + ec.message() + ")");
  }
  return base;
}

}  // namespace

Result<std::string> make_run_dir(std::string_view log_dir, std::string_view run_id,
                                 const std::string& temp_root) {
  if (log_dir == k_devnull) {
    return std::string();
  }
  auto base = ensure_base_dir(log_dir, temp_root);
  if (!base) {
    return base.error();
  }
  auto run_dir = make_temp_dir(*base, std::string(run_id) + "_");
  if (!run_dir) {
    return make_error(ErrorCode::io, util::quoted(*base) +
                                         ": expected a directory where the run directory can be "
                                         "created (" +
                                         run_dir.error().message + ")");
  }
  return run_dir;
}

Result<void> prepare_attempt_dir(std::string_view run_dir, int attempt, int nproc) {
  if (run_dir.empty()) {
    return {};
  }
  auto dir = attempt_dir(run_dir, attempt);
  std::error_code ec;
  fs::remove_all(dir, ec);  // torchrun: rmtree(ignore_errors=True)
  for (int lr = 0; lr < nproc; ++lr) {
    auto rank_dir = dir + "/" + std::to_string(lr);
    fs::create_directories(rank_dir, ec);
    if (ec) {
      return make_error(ErrorCode::io, "mkdir(" + rank_dir + "): " + ec.message());
    }
  }
  if (nproc <= 0) {
    fs::create_directories(dir, ec);
  }
  return {};
}

}  // namespace ddprun::output
