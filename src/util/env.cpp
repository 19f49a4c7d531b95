#include "ddprun/util/env.hpp"

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

}  // namespace ddprun::util
