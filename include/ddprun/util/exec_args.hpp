#pragma once
// The argv/envp arrays execve() takes. Header-only, so the test harness (which links no ddprun
// library) spawns its processes with the same code as the launcher.

#include <string>
#include <vector>

namespace ddprun::util {

/// `strings` as a null-terminated array of pointers into them; `strings` must outlive it.
inline std::vector<char*> exec_args(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) {
    out.push_back(const_cast<char*>(s.c_str()));
  }
  out.push_back(nullptr);
  return out;
}

}  // namespace ddprun::util
