#pragma once
// How an agent leaves the rendezvous: what the store behind it (etcd-v3's EtcdRun) must keep
// or remove when this agent is the last one out.

namespace ddprun::rdzv {

/// `job_ended`: the run is closed (shutdown()). `left_out`: this node is left out of a job
/// that goes on (withdraw()). `node_only`: this node leaves alone, the others go on (a signal:
/// leave()).
enum class Leaving { node_only, left_out, job_ended };

}  // namespace ddprun::rdzv
