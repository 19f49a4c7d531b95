#pragma once
// The rendezvous store's port when it is derived from the job id (spec/schedulers.md): the
// hosting agent binds the first free candidate, the others try the candidates in the same
// order until one answers with this run's host marker (rdzv::host_marker_key), so a foreign
// service on a candidate port is passed over.

#include "ddprun/store/client.hpp"
#include "ddprun/store/server.hpp"
#include "ddprun/util/result.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace ddprun::app {

/// Listens on the first candidate that binds; returns it. Error names the host and every port.
Result<int> listen_on_first_free(store::Server& server, const std::string& bind_addr,
                                 const std::string& host, const std::vector<int>& candidates);

/// Blocks (before the agent's event loop runs) until a candidate on `host` holds `marker`,
/// at most `timeout`. A store that keeps refusing this agent's token while no candidate answers
/// as this run's store ends the search early with that refusal: it is most likely ours.
Result<int> find_store_port(const std::string& host, const std::vector<int>& candidates,
                            const std::string& marker, const store::ClientOptions& base,
                            std::chrono::milliseconds timeout);

}  // namespace ddprun::app
