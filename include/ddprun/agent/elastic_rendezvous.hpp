#pragma once
// Rendezvous for multi-node jobs: the dynamic rendezvous (rdzv::DynamicRendezvous) over
// the network store, plus the per-round worker store. Static jobs (--rdzv-backend static,
// --nnodes N) use the same engine with MIN = MAX = N and ranks ordered by --node-rank.

#include "ddprun/agent/seams.hpp"
#include "ddprun/agent/stack_exchange.hpp"
#include "ddprun/agent/store_duties.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/rdzv/dynamic_rendezvous.hpp"
#include "ddprun/rdzv/leaving.hpp"

#include <functional>
#include <memory>
#include <optional>

namespace ddprun::agent {

struct ElasticOptions {
  bool is_static = false;
  /// The rendezvous store in use (static: also the workers' MASTER_ADDR:MASTER_PORT; etcd-v3:
  /// the first member), for messages; its port is the one bound or found.
  config::Endpoint store;
  std::string advertise_addr;  ///< MASTER_ADDR when this node is group rank 0 (c10d)
  std::chrono::milliseconds exit_barrier_timeout{300000};
  std::chrono::milliseconds host_linger{30000};  ///< store host waits for peers to disconnect
  /// Runs after shutdown(), leave() and withdraw(): etcd-v3 gives up this agent's lease and
  /// removes the run's keys when it is the last one out. Empty: nothing to do.
  std::function<asio::awaitable<void>(rdzv::Leaving how)> finish;
  /// Called as a join begins (nullopt) and when it formed a round (its number): the agent's
  /// death notice names the round it runs in (rdzv/death_notice.hpp). Empty: nothing to do.
  std::function<void(std::optional<int> round)> on_round;
  /// Called as the exit barrier begins: this node's work is done, and its death from then on
  /// must not end the round its peers are finishing (the notice is withdrawn).
  std::function<void()> on_done;
};

class ElasticRendezvous final : public Rendezvous, public StackExchange {
 public:
  /// `stores`: the stores around it (store_duties.hpp). `cfg`, `group` (this node's workers)
  /// and `stores` must outlive the rendezvous.
  ElasticRendezvous(asio::io_context& ctx, const config::RendezvousPlan& cfg,
                    const config::WorkerGroup& group, std::shared_ptr<rdzv::DynamicRendezvous> dyn,
                    StoreDuties& stores, ElasticOptions options);
  ~ElasticRendezvous() override;
  ElasticRendezvous(const ElasticRendezvous&) = delete;
  ElasticRendezvous& operator=(const ElasticRendezvous&) = delete;

  asio::awaitable<Result<Round>> next_round(int restart_count) override;
  asio::awaitable<RdzvSignal> watch() override;
  asio::awaitable<rdzv::CrashStreak> report_failure(FailureNote note) override;
  asio::awaitable<std::string> exclusion() override;
  asio::awaitable<void> withdraw() override;
  asio::awaitable<void> mark_unhealthy(std::string reason) override;
  asio::awaitable<void> exit_barrier(bool success) override;
  asio::awaitable<void> shutdown() override;
  asio::awaitable<void> leave(std::chrono::milliseconds bound) override;
  std::string describe() const override;
  bool standing_by() const override;
  asio::awaitable<bool> request_stacks(std::string reason) override;
  std::string stacks_request() const override;
  asio::awaitable<void> answer_stacks(errors::NodeStacks mine) override;
  asio::awaitable<PeerStacks> collect_stacks(std::chrono::milliseconds bound) override;

 private:
  Result<rdzv::MasterEndpoint> my_worker_store(const rdzv::RoundResult& round);
  asio::awaitable<void> linger_while_peers_connected();
  /// An excluded store host: serves the store until the run is closed or no peer has been
  /// connected for the keep-alive bound.
  asio::awaitable<void> serve_until_job_ends();
  /// Until the store first answers, a WARNING after first_incomplete_warning and then every
  /// incomplete_warning_interval (a node started before its store host, or pointed elsewhere).
  struct StoreWatch;
  void start_store_watch();
  void stop_store_watch();
  asio::awaitable<void> warn_while_store_silent(std::shared_ptr<StoreWatch> watch);
  std::string endpoint_text() const;  ///< "host:port" of the rendezvous store

  asio::io_context& ctx_;
  const config::RendezvousPlan& cfg_;
  const config::WorkerGroup& group_;
  std::shared_ptr<rdzv::DynamicRendezvous> dyn_;
  bool collecting_stacks_ = false;  ///< this node's stacks request stands: it prints the report
  int group_world_size_ = 1;        ///< of the current round
  StoreDuties& stores_;
  ElasticOptions options_;
  std::shared_ptr<StoreWatch> store_watch_;  ///< shared with its coroutine
  bool succeeded_ = false;                   ///< exit_barrier(true): the run is closed as finished
};

}  // namespace ddprun::agent
