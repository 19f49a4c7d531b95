#pragma once
// The host's name as torchrun sees it, decided in pure code (facts.cpp does the lookups).

#include <string>
#include <vector>

namespace ddprun::host {

/// Python's socket.getfqdn() choice among a reverse lookup's `name` and `aliases`: the first
/// with a dot, `name` first; `name` when none has one.
std::string pick_fqdn(const std::string& name, const std::vector<std::string>& aliases);

/// What a multi-node agent publishes as its address (its rendezvous identity, and MASTER_ADDR
/// where it becomes group rank 0), or why it cannot publish one.
struct PublishedAddr {
  std::string addr;   ///< empty with `error`
  std::string info;   ///< a line for INFO when the choice is worth a word
  std::string error;  ///< the one line to fail with
};

/// What the agent knows when it decides.
struct AddrFacts {
  std::string local_addr;     ///< --local-addr ("" when not given)
  std::string route_source;   ///< the address of the interface toward the endpoint ("" none)
  std::string name;           ///< this host's name (host_fqdn)
  bool name_resolves = true;  ///< the name resolves on this host
  std::string endpoint;       ///< host:port of the rendezvous endpoint, for the lines
};

/// --local-addr when given; else the interface address toward the rendezvous endpoint (with
/// an INFO line when the host's own name does not resolve); else the host's name when it
/// resolves; else an error naming the name and --local-addr (no agent could reach it).
PublishedAddr choose_published_addr(const AddrFacts& facts);

}  // namespace ddprun::host
