#pragma once
// The rendezvous store's port when it is derived from the job id (spec/schedulers.md): the
// hosting agent binds the first free candidate, the others try the candidates in the same
// order until one answers with this run's host marker (rdzv::host_marker_key), so a foreign
// service on a candidate port is passed over.

#include "ddprun/store/client.hpp"
#include "ddprun/store/server.hpp"
#include "ddprun/util/result.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace ddprun::rdzv {

/// The process listening on a TCP port of this machine, as far as /proc shows it.
struct PortHolder {
  long pid = 0;         ///< 0: a listener exists, but this user cannot see its process
  std::string command;  ///< /proc/<pid>/comm
};

/// The listener of TCP `port` in this network namespace (/proc/net/tcp{,6}, /proc/*/fd), or
/// nullopt when none is found.
std::optional<PortHolder> find_port_holder(int port);

/// "held by pid 4242 (python3)", or "held by a process this user cannot see".
std::string describe(const PortHolder& holder);

/// `e` with ", held by ..." appended when the port has a listener.
Error with_port_holder(Error e, int port);

/// What listens at a rendezvous store endpoint that this agent joins as a client.
enum class EndpointAnswer {
  nobody,       ///< refused or unreachable: its host may not have started yet
  store,        ///< it speaks the TCPStore protocol (or refused this agent's token)
  not_a_store,  ///< it accepted, then stayed silent, closed or answered bytes no TCPStore sends
  old_store     ///< a TCPStore of PyTorch 2.1 or older, whose protocol the agents do not speak
};
struct EndpointCheck {
  EndpointAnswer answer = EndpointAnswer::nobody;
  std::string why;  ///< for not_a_store: what it did; for old_store: its dialect
};

/// One look at `base`'s host and port, bounded by a few seconds: a TCP connection, then the
/// dialect probes and a CHECK of `key`, as a rendezvous client would send them.
EndpointCheck check_endpoint(const store::ClientOptions& base, const std::string& key);

/// Listens on the first candidate that binds; returns it. Error names the host and every port.
Result<int> listen_on_first_free(store::Server& server, const std::string& bind_addr,
                                 const std::string& host, const std::vector<int>& candidates);

/// Blocks (before the agent's event loop runs) until a candidate on `host` holds `marker`,
/// at most `timeout`. A store that keeps refusing this agent's token while no candidate answers
/// as this run's store ends the search early with that refusal: it is most likely ours.
Result<int> find_store_port(const std::string& host, const std::vector<int>& candidates,
                            const std::string& marker, const store::ClientOptions& base,
                            std::chrono::milliseconds timeout);

}  // namespace ddprun::rdzv
