#include "ddprun/host/torch_version.hpp"

#include "ddprun/util/files.hpp"
#include "ddprun/util/strings.hpp"

#include <unistd.h>

#include <filesystem>
#include <regex>

namespace ddprun::host {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view k_override_env = "DDPRUN_WORKER_TORCH";

std::string read_small(const fs::path& p) { return util::read_file(p.string()).value_or(""); }

/// "3.11" from python3.11's file name; "" when the name carries no version.
std::string python_version_of(const std::string& real) {
  static const std::regex k_name(R"(python(\d+\.\d+)$)");
  std::smatch m;
  const auto name = fs::path(real).filename().string();
  return std::regex_search(name, m, k_name) ? m[1].str() : std::string();
}

bool venv_includes_system(const std::string& venv_cfg) {
  static const std::regex k_line(R"(include-system-site-packages\s*=\s*true)", std::regex::icase);
  return std::regex_search(venv_cfg, k_line);
}

/// The prefix's own site directories (a conda env, a pyenv version, /usr/local, /usr).
void add_prefix_dirs(std::vector<std::string>& out, const fs::path& prefix,
                     const std::string& version) {
  const auto lib = prefix / "lib" / ("python" + version);
  out.push_back((lib / "site-packages").string());
  if (prefix == "/usr") {  // Debian and Ubuntu: /usr/local first, then the packaged modules
    out.push_back("/usr/local/lib/python" + version + "/dist-packages");
    out.push_back("/usr/lib/python3/dist-packages");
    out.push_back((lib / "dist-packages").string());
  }
}

}  // namespace

std::optional<TorchVersion> parse_torch_version(std::string_view text) {
  static const std::regex k_version(R"((?:^|['"])(\d+)\.(\d+)(?:[.+a-z0-9]*)(?:['"]|$))");
  const std::string s(text);
  std::smatch m;
  if (!std::regex_search(s, m, k_version)) {
    return std::nullopt;
  }
  return TorchVersion{std::stoi(m[1].str()), std::stoi(m[2].str()), ""};
}

std::vector<std::string> package_dirs(const std::string& python, const std::string& real,
                                      const std::string& venv_cfg, const util::Env& env) {
  std::vector<std::string> out;
  for (const auto& dir : util::split(env.get("PYTHONPATH").value_or(""), ':')) {
    if (!dir.empty()) {
      out.push_back(dir);
    }
  }
  const auto version = python_version_of(real);
  if (version.empty()) {
    return out;
  }
  const bool in_venv = !venv_cfg.empty();
  if (in_venv) {
    out.push_back((fs::path(python).parent_path().parent_path() / "lib" / ("python" + version) /
                   "site-packages")
                      .string());
  }
  if (in_venv && !venv_includes_system(venv_cfg)) {
    return out;
  }
  if (auto home = env.get_nonempty("HOME"); home && !env.get_nonempty("PYTHONNOUSERSITE")) {
    out.push_back(*home + "/.local/lib/python" + version + "/site-packages");
  }
  add_prefix_dirs(out, fs::path(real).parent_path().parent_path(), version);
  return out;
}

std::optional<TorchVersion> find_worker_torch(const std::string& python, const util::Env& env) {
  if (auto forced = env.get_nonempty(k_override_env)) {
    auto v = parse_torch_version(*forced);
    if (v) {
      v->where = std::string(k_override_env);
    }
    return v;
  }
  std::string path = python;
  if (python.find('/') == std::string::npos) {
    const auto found = util::executables_on_path(python, env.get("PATH").value_or(""));
    path = found.empty() ? std::string() : found.front();
  }
  std::error_code ec;
  const auto real = fs::canonical(path, ec);
  if (path.empty() || ec) {
    return std::nullopt;
  }
  const auto venv_cfg = fs::path(path).parent_path().parent_path() / "pyvenv.cfg";
  for (const auto& dir : package_dirs(path, real.string(), read_small(venv_cfg), env)) {
    const auto file = fs::path(dir) / "torch" / "version.py";
    if (!fs::exists(file, ec)) {
      continue;
    }
    for (const auto& line : util::split(read_small(file), '\n')) {
      if (line.rfind("__version__", 0) == 0) {
        auto v = parse_torch_version(line.substr(line.find('=') + 1));
        if (v) {
          v->where = (fs::path(dir) / "torch").string();
        }
        return v;
      }
    }
  }
  return std::nullopt;
}

}  // namespace ddprun::host
