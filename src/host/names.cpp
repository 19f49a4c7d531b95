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

PublishedAddr choose_published_addr(const AddrFacts& f) {
  if (!f.local_addr.empty()) {
    return {f.local_addr, "", ""};
  }
  if (!f.route_source.empty()) {
    if (f.name_resolves) {
      return {f.route_source, "", ""};
    }
    return {f.route_source,
            "this host's name '" + f.name + "' does not resolve here; publishing " +
                f.route_source + ", the address of the interface toward the rendezvous endpoint " +
                f.endpoint + " (--local-addr sets another)",
            ""};
  }
  if (f.name_resolves) {
    return {f.name, "", ""};
  }
  return {"", "",
          "this host's name '" + f.name +
              "' does not resolve here and no interface reaches the "
              "rendezvous endpoint " +
              f.endpoint +
              ": pass --local-addr with an address the other "
              "nodes reach this one at"};
}

}  // namespace ddprun::host
