#include "ddprun/host/names.hpp"

namespace ddprun::host {

std::string pick_fqdn(const std::string& name, const std::vector<std::string>& aliases) {
  if (name.find('.') != std::string::npos) {
    return name;
  }
  for (const auto& alias : aliases) {
    if (alias.find('.') != std::string::npos) {
      return alias;
    }
  }
  return name;
}

}  // namespace ddprun::host
