#pragma once
// One agent's place in an etcd-v3 run (the key layout and the lifetimes are in
// etcd_layout.hpp): its lease, renewed by a LeaseKeeper, the generation of the --rdzv-id it
// joined or started, and the Kv the rendezvous runs on (EtcdKv under that generation's
// prefix, signed with the rendezvous token when there is one).

#include "ddprun/etcd/client.hpp"
#include "ddprun/rdzv/etcd_kv.hpp"
#include "ddprun/rdzv/leaving.hpp"
#include "ddprun/rdzv/run_end.hpp"
#include "ddprun/rdzv/signed_kv.hpp"
#include "ddprun/rdzv/state.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace ddprun::rdzv {

struct EtcdRunOptions {
  std::string key_prefix;  ///< without a trailing '/'
  std::string run_id;
  std::string node_id;  ///< NodeDesc::id(): the name of this agent's alive key
  std::chrono::seconds lease_ttl{15};
  /// How long open() keeps trying while no member answers (the join timeout).
  std::chrono::milliseconds deadline{600000};
  std::optional<std::string> token;  ///< the rendezvous token: values are signed with it
  /// How long a generation running a round may go without one keep-alive before a starting
  /// agent takes it for dead (the keep-alive bound plus one interval).
  std::chrono::milliseconds liveness_wait{20000};
  /// How long the record of a finished generation's end outlives its keys (--rdzv-conf
  /// end_record_ttl): an agent of the job that comes back later than this starts a new run.
  std::chrono::seconds end_record_ttl{3600};
};

class EtcdRun {
 public:
  /// Takes a lease and keeps it alive, then joins the run's current generation or starts the
  /// next (decide_generation). Retries every error until `deadline`, then fails with one
  /// error naming the members and etcd's last answer. `client` must outlive the result.
  static asio::awaitable<Result<std::unique_ptr<EtcdRun>>> open(etcd::Client& client,
                                                                EtcdRunOptions options);
  ~EtcdRun();
  EtcdRun(const EtcdRun&) = delete;
  EtcdRun& operator=(const EtcdRun&) = delete;

  /// The rendezvous' store: this generation's keys, this agent's own ones on its lease.
  Kv& kv();
  std::int64_t generation() const { return generation_; }
  /// The lease this agent's keys are on now (a lost one is replaced, see below).
  etcd::LeaseId lease_id() const { return lease_.id; }
  /// Called with the new lease whenever a lost one is replaced (the agent's death notice,
  /// rdzv/death_notice.hpp, names the lease to revoke).
  void set_lease_listener(std::function<void(etcd::LeaseId)> listener) {
    lease_listener_ = std::move(listener);
  }
  /// This agent leaves the run: closes the Kv's watch streams, stops renewing and revokes its
  /// lease (its own keys vanish at once), then deletes the generation when no agent is left
  /// alive in it, and the previous one too when no agent is alive there either (a job whose
  /// last agent died while leaving). Errors are logged; a second call does nothing.
  /// `job_ended`: the run is closed, so an agent still alive in the generation is one that is
  /// leaving too, or one that died (killed, its node lost) whose lease has not run out yet: the
  /// agent waits for them, up to one lease TTL (+1 s), so the last one out removes the run's
  /// keys even then. `node_only` (a signal): the others go on, no wait. `left_out`: this node
  /// is left out of a job that goes on; as the last one out it keeps the generation, whose
  /// header says why, for the agents still to come (the next to start carries the record on).
  using Leaving = rdzv::Leaving;
  asio::awaitable<void> finish(Leaving how = Leaving::node_only);
  /// How this agent's generation ended, from the record its last agent out left
  /// (etcd_end_record_key); nullopt when there is none (never closed, or the record expired).
  asio::awaitable<Result<std::optional<RunEnd>>> run_end();

  /// Stops renewing the lease and replacing it, leaving everything as it is, as if this
  /// agent's machine died: its keys vanish when the lease runs out (a lost node, simulated by
  /// bench/rdzv_scale_bench). The Kv stays usable; finish() afterwards does nothing.
  void abandon();

  /// When the LeaseKeeper finds the lease lost (etcd says it expired, or no member renewed it
  /// for two TTLs), the agent takes a new one, retrying until etcd grants it or finish(),
  /// and writes its alive key and every key of its own again on it: its liveness keys come
  /// back instead of the agent running on without them. Peers that saw the keys vanish have
  /// counted it as lost by then; it joins their next round as any dropped node does.
  struct Life;  // shared with the coroutine that takes a new lease: says whether this lives

 private:
  EtcdRun(etcd::Client& client, EtcdRunOptions options, etcd::Lease lease);
  void keep_lease();
  asio::awaitable<void> replace_lease(std::shared_ptr<Life> life);
  asio::awaitable<Result<void>> rewrite_own_keys(const Life& life);
  asio::awaitable<void> remove_abandoned(std::int64_t generation);
  struct Look;  // what try_join read about the run
  asio::awaitable<Result<Look>> look();
  asio::awaitable<Result<bool>> try_join();
  /// The put of `generation`'s header, signed as the rendezvous' Kv signs it.
  etcd::PutRequest header_put(std::int64_t generation, const RoundHeader& h) const;
  /// Whether a keep-alive of generation_ is written after `revision`, within liveness_wait
  /// (a compacted start revision is watched again from the oldest one etcd kept).
  asio::awaitable<Result<bool>> heartbeat_after(etcd::Revision revision);
  struct BeatWait;  // heartbeat_after's watch, shared with its deadline
  asio::awaitable<Result<etcd::Revision>> watch_beats(BeatWait& wait, etcd::Revision from);
  asio::awaitable<void> let_go();
  /// The put of generation_'s end record on a lease of end_record_ttl, when its header says
  /// it is closed; nullopt otherwise (logged when etcd refuses the lease).
  asio::awaitable<std::optional<etcd::PutRequest>> end_record();
  /// The node id of an agent still alive in generation_ ("" when none is); nullopt when etcd
  /// could not say (logged).
  asio::awaitable<std::optional<std::string>> someone_alive();
  /// someone_alive() again every k_alone_poll until it is "", up to one lease TTL + 1 s.
  asio::awaitable<std::optional<std::string>> wait_until_alone(std::string alive);
  void use_generation(std::int64_t generation);

  etcd::Client& client_;
  EtcdRunOptions options_;
  etcd::Lease lease_;
  std::string run_prefix_;
  std::int64_t generation_ = 0;
  std::unique_ptr<EtcdKv> etcd_kv_;
  std::unique_ptr<SignedKv> signed_kv_;
  std::unique_ptr<etcd::LeaseKeeper> keeper_;
  std::shared_ptr<Life> life_;
  bool finished_ = false;
  std::function<void(etcd::LeaseId)> lease_listener_;
};

}  // namespace ddprun::rdzv
