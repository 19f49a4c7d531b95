// Rendezvous flags: backend, endpoint, run id, conf, --standalone and the static store address.
#include "flag_groups.hpp"

namespace ddprun::cli::detail {

std::vector<FlagSpec> rdzv_flags() {
  using enum FlagKind;
  const auto g = FlagGroup::rendezvous;
  return {
      {"rdzv_backend", {"--rdzv-backend", "--rdzv_backend"}, valued, "static",
       "PET_RDZV_BACKEND", "BACKEND", {}, g, "Rendezvous backend: static or c10d."},
      {"rdzv_endpoint", {"--rdzv-endpoint", "--rdzv_endpoint"}, valued, "", "PET_RDZV_ENDPOINT",
       "HOST[:PORT]", {}, g,
       "Rendezvous backend endpoint; c10d uses port 29400 when none is given."},
      {"rdzv_id", {"--rdzv-id", "--rdzv_id"}, valued, "none", "PET_RDZV_ID", "ID", {}, g,
       "User-defined group id (job id) shared by every node of the job."},
      {"rdzv_conf", {"--rdzv-conf", "--rdzv_conf"}, valued, "", "PET_RDZV_CONF", "K=V,...", {},
       g, "Additional rendezvous configuration, e.g. join_timeout=600,read_timeout=60."},
      {"standalone", {"--standalone"}, boolean, "0", "PET_STANDALONE", "", {}, g,
       "Single-node job: start a local c10d rendezvous on a free port with a random id, "
       "overriding the --rdzv-* options."},
      {"master_addr", {"--master-addr", "--master_addr"}, valued, "127.0.0.1",
       "PET_MASTER_ADDR", "ADDR", {}, g,
       "Address of the node with rank 0 (static rendezvous only); becomes MASTER_ADDR."},
      {"master_port", {"--master-port", "--master_port"}, valued, "29500", "PET_MASTER_PORT",
       "PORT", {}, g, "Port on the rank 0 node (static rendezvous only); becomes MASTER_PORT."},
      {"local_addr", {"--local-addr", "--local_addr"}, valued, "", "PET_LOCAL_ADDR", "ADDR", {},
       g, "Address this node advertises to the rendezvous; defaults to the host's FQDN."},
  };
}

}  // namespace ddprun::cli::detail
