#include "ddprun/util/env.hpp"

#include "ddprun/util/strings.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

namespace ddprun::util {

Env Env::from_environ(char** envp) {
  Env env;
  for (char** p = envp; p != nullptr && *p != nullptr; ++p) {
    std::string_view entry(*p);
    auto eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      continue;
    }
    env.vars_.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return env;
}

std::optional<std::string> Env::get(std::string_view name) const {
  auto it = vars_.find(std::string(name));
  if (it == vars_.end()) {
    return std::nullopt;
  }
  return it->second;
}

std::optional<std::string> Env::get_nonempty(std::string_view name) const {
  auto v = get(name);
  if (!v || v->empty()) {
    return std::nullopt;
  }
  return v;
}

std::vector<std::string> Env::to_strings() const {
  std::vector<std::string> out;
  out.reserve(vars_.size());
  for (const auto& [k, v] : vars_) {
    out.push_back(k + "=" + v);
  }
  return out;
}

std::vector<std::string> executables_on_path(std::string_view name, std::string_view path_var) {
  std::vector<std::string> found;
  std::vector<std::filesystem::path> seen;
  for (const auto& dir : split(path_var, ':')) {
    const auto file = std::filesystem::path(dir.empty() ? "." : dir) / name;
    std::error_code ec;
    const auto real = std::filesystem::canonical(file, ec);
    if (ec || ::access(file.c_str(), X_OK) != 0 ||
        std::find(seen.begin(), seen.end(), real) != seen.end()) {
      continue;
    }
    seen.push_back(real);
    found.push_back(file.string());
  }
  return found;
}

}  // namespace ddprun::util
