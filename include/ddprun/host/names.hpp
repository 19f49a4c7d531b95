#pragma once
// The host's name as torchrun sees it, decided in pure code (facts.cpp does the lookups).

#include <string>
#include <vector>

namespace ddprun::host {

/// Python's socket.getfqdn() choice among a reverse lookup's `name` and `aliases`: the first
/// with a dot, `name` first; `name` when none has one.
std::string pick_fqdn(const std::string& name, const std::vector<std::string>& aliases);

}  // namespace ddprun::host
