#pragma once
// StoreDuties: what ElasticRendezvous needs of the TCPStores around it, passed in by the backend
// that built them (backend/store_duties.cpp), so agent/ never sees a store server or client:
// the rendezvous store this agent may host (the static backend's workers use it too, a store
// host serves the others until the job ends), this agent's client of it (whether it was ever
// reached, bounding its calls once a round formed), and each c10d round's workers' store on
// group rank 0. An etcd-v3 agent has neither a hosted store nor a store client.

#include "ddprun/config/launch_config.hpp"
#include "ddprun/rdzv/dynamic_rendezvous.hpp"
#include "ddprun/util/result.hpp"

#include <chrono>
#include <cstddef>
#include <string>

namespace ddprun::agent {

class StoreDuties {
 public:
  virtual ~StoreDuties() = default;

  // The rendezvous store this agent hosts (none: every answer says so).
  /// This agent hosts the rendezvous store.
  virtual bool hosting() const = 0;
  /// The static backend's workers use the hosted store: the last round's worker keys go.
  virtual void clear_worker_keys() = 0;
  /// Connections to the hosted store other than this agent's own client's.
  virtual std::size_t peer_connections() const = 0;

  // This agent's client of the rendezvous store (none under etcd-v3).
  /// There is a store client, whose silence is worth a warning while joining.
  virtual bool has_client() const = 0;
  /// The client reached the store at least once.
  virtual bool client_connected() const = 0;
  /// From now on a store call that fails fails within `bound` instead of retrying.
  virtual void bound_calls(std::chrono::milliseconds bound) = 0;
  /// Closes the client's connections (a store host lingering for its peers).
  virtual void close_client() = 0;

  // The workers' store of a c10d round on group rank 0.
  /// A fresh store for this round's workers, listening on `addr` only (a free port): where.
  virtual Result<rdzv::MasterEndpoint> start_worker_store(const std::string& addr) = 0;
  /// The last round's workers' store goes.
  virtual void stop_worker_store() = 0;
};

}  // namespace ddprun::agent
