// Rendezvous flags: backend, endpoint, run id, conf, --standalone and the static store address.
#include "flag_groups.hpp"

namespace ddprun::cli::detail {

std::vector<FlagSpec> rdzv_flags() {
  const auto g = FlagGroup::rendezvous;
  return {
      {.dest = flag::k_rdzv_backend,
       .spellings = {"--rdzv-backend", "--rdzv_backend"},
       .kind = FlagKind::valued,
       .default_value = "static",
       .env_var = "PET_RDZV_BACKEND",
       .metavar = "BACKEND",
       .group = g,
       .help = "Rendezvous backend: static, c10d or etcd-v3 (the rendezvous in an etcd cluster, "
               "through etcd's v3 API). torchrun's etcd and etcd-v2 are refused: they use the "
               "v2 API that etcd 3.6 removed."},
      {.dest = flag::k_rdzv_endpoint,
       .spellings = {"--rdzv-endpoint", "--rdzv_endpoint"},
       .kind = FlagKind::valued,
       .env_var = "PET_RDZV_ENDPOINT",
       .metavar = "HOST[:PORT]",
       .group = g,
       .help = "Rendezvous backend endpoint; c10d uses port 29400 when none is given. etcd-v3: "
               "the etcd members, comma-separated, [http://|https://]HOST[:PORT] (port 2379 "
               "when none is given)."},
      {.dest = flag::k_rdzv_id,
       .spellings = {"--rdzv-id", "--rdzv_id"},
       .kind = FlagKind::valued,
       .default_value = "none",
       .env_var = "PET_RDZV_ID",
       .metavar = "ID",
       .group = g,
       .help = "User-defined group id (job id) shared by every node of the job."},
      {.dest = flag::k_rdzv_conf,
       .spellings = {"--rdzv-conf", "--rdzv_conf"},
       .kind = FlagKind::valued,
       .env_var = "PET_RDZV_CONF",
       .metavar = "K=V,...",
       .group = g,
       .help = "Additional rendezvous configuration, e.g. join_timeout=600,read_timeout=60. "
               "Keys: join_timeout, last_call_timeout, close_timeout, heartbeat_timeout, "
               "keep_alive_interval, keep_alive_max_attempt, read_timeout, is_host, timeout, "
               "token_file, store_type, rank, use_libuv, max_node_failures, spare_grace, "
               "node_domain; an "
               "unknown key is ignored with a warning. max_node_failures=K (default 2, 0 never): "
               "a node that was the root cause of K failed rounds in a row leaves the job (exit "
               "status 3) when the others, with the spares waiting beyond --nnodes MAX, can go "
               "on without it. spare_grace=S (default 3): how long a spare lets the previous "
               "members take their places in a new round. node_domain=NAME: this node's "
               "NVLink domain for node ranks and --segment (else DDPRUN_NODE_DOMAIN, the "
               "GPUs' fabric, Slurm's block). token_file=PATH authenticates the "
               "agents to each other with the secret "
               "in PATH (mode 600; see also DDPRUN_RDZV_TOKEN). etcd-v3 also reads "
               "protocol (http or https), cacert, cert and key (PEM files), key_prefix (default "
               "/ddprun/rdzv), username and password_file (etcd auth; a password key is ignored: "
               "never put one on the command line), and end_record_ttl=S (default 3600): how "
               "long the record of how a run ended outlives its keys, so that a node coming "
               "back after the end learns it."},
      {.dest = flag::k_standalone,
       .spellings = {"--standalone"},
       .kind = FlagKind::boolean,
       .default_value = "0",
       .env_var = "PET_STANDALONE",
       .group = g,
       .help = "Single-node job: start a local c10d rendezvous on a free port with a random id, "
               "overriding the --rdzv-* options."},
      {.dest = flag::k_master_addr,
       .spellings = {"--master-addr", "--master_addr"},
       .kind = FlagKind::valued,
       .default_value = "127.0.0.1",
       .env_var = "PET_MASTER_ADDR",
       .metavar = "ADDR",
       .group = g,
       .help = "Address of the node with rank 0 (static rendezvous only); becomes MASTER_ADDR."},
      {.dest = flag::k_master_port,
       .spellings = {"--master-port", "--master_port"},
       .kind = FlagKind::valued,
       .default_value = "29500",
       .env_var = "PET_MASTER_PORT",
       .metavar = "PORT",
       .group = g,
       .help = "Port on the rank 0 node (static rendezvous only); becomes MASTER_PORT."},
      {.dest = flag::k_local_addr,
       .spellings = {"--local-addr", "--local_addr"},
       .kind = FlagKind::valued,
       .env_var = "PET_LOCAL_ADDR",
       .metavar = "ADDR",
       .group = g,
       .help = "Address this node advertises to the rendezvous; defaults to the host's FQDN."},
  };
}

}  // namespace ddprun::cli::detail
