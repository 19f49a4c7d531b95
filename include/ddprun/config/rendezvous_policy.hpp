#pragma once
// Which rendezvous a resolved launch needs and who hosts its store: pure decisions over the
// RendezvousPlan, the machine's answers (is this name local, is that address loopback) passed in
// by the app, which builds the backend they choose (src/app/rendezvous_backend.cpp).

#include "ddprun/config/launch_config.hpp"
#include "ddprun/util/result.hpp"

#include <optional>

namespace ddprun::config {

/// True when the job is this one agent alone (LocalRendezvous): --standalone, or one node with
/// the static backend, no c10d endpoint, or a c10d endpoint on port 0 (torchtitan's
/// `--rdzv_endpoint localhost:0`: the agent hosts the store on a free port, as torchrun does).
/// etcd-v3 is never alone: its rendezvous is in etcd even for one node.
bool is_single_node(const RendezvousPlan& cfg);

/// Where the rendezvous store of a multi-node static or c10d job is: static
/// --master-addr:--master-port, c10d --rdzv-endpoint (localhost when it names no host).
Endpoint store_endpoint(const RendezvousPlan& cfg);

/// c10d's --rdzv-conf is_host as a bool (torchrun: its bool text): nullopt when not given; a bad
/// word is an error quoting the item and saying what was expected, for resolve() to prefix with
/// the option, before anything starts.
Result<std::optional<bool>> read_is_host(const RendezvousPlan& cfg);

/// Whether this agent tries to host the rendezvous store, and whether that was asked for
/// explicitly (static node 0, or c10d's --rdzv-conf is_host): then a failed bind is an error,
/// not a sign that another agent hosts it.
struct HostingChoice {
  bool host = false;
  bool asked = false;
};
/// `endpoint_is_local`: the store endpoint's host names this machine.
HostingChoice hosting_choice(const RendezvousPlan& cfg, bool endpoint_is_local);

/// Whether the store listens on every interface instead of the endpoint's own address: that
/// address is loopback here (`address_is_loopback`: Debian maps its hostname to 127.0.1.1)
/// while the job spans nodes and the endpoint's name is not a loopback name
/// (`name_is_loopback`), so the other nodes could not reach it there.
bool listens_everywhere(const RendezvousPlan& cfg, bool address_is_loopback, bool name_is_loopback);

}  // namespace ddprun::config
