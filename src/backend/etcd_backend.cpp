// etcd-v3: the dynamic rendezvous with its keys in an etcd cluster. This agent's keys live on
// its own lease (rdzv::EtcdRun), so a dead agent's keys go when the lease expires; no agent
// hosts a rendezvous store, and the last agent out removes the run.

#include "ddprun/config/rendezvous_hint.hpp"
#include "ddprun/etcd/client.hpp"
#include "ddprun/etcd/endpoints.hpp"
#include "ddprun/host/facts.hpp"
#include "ddprun/net/run_now.hpp"
#include "ddprun/rdzv/etcd_layout.hpp"
#include "ddprun/rdzv/etcd_options.hpp"
#include "ddprun/rdzv/etcd_run.hpp"
#include "ddprun/util/fatal.hpp"

#include "backends.hpp"
#include "store_duties.hpp"

namespace ddprun::backend {

namespace {

/// What this agent's guardian tells etcd if the agent is killed (the generation and the lease
/// are known once the run is open).
rdzv::DeathNotice etcd_notice(const config::RendezvousPlan& cfg, const rdzv::EtcdRunOptions& run,
                              const etcd::Client& client) {
  const auto& options = client.options();
  rdzv::DeathNotice n;
  n.backend = rdzv::DeathNotice::Backend::etcd_v3;
  n.run_id = run.run_id;
  n.node_id = run.node_id;
  n.token = run.token;
  n.members = etcd::to_string(options.endpoints);
  n.ca_file = options.tls.ca_file;
  n.cert_file = options.tls.cert_file;
  n.key_file = options.tls.key_file;
  n.username = options.username;
  n.password = options.password;
  n.key_prefix = cfg.etcd.key_prefix;
  return n;
}

class EtcdBackend final : public ElasticBackend {
 public:
  EtcdBackend(asio::io_context& ctx, const config::LaunchConfig& cfg, const util::Env& env,
              const util::Clock& clock)
      : stores_(ctx, nullptr, nullptr) {
    auto settings = cfg.rdzv.rdzv_settings;
    auto client = etcd::Client::make(ctx, value_or_throw(rdzv::etcd_client_options(cfg.rdzv.etcd)));
    if (!client) {
      throw Fatal(make_error(client.error().code, "etcd-v3 rendezvous: " + client.error().message));
    }
    etcd_ = std::move(*client);
    const config::Endpoint first = cfg.rdzv.rdzv_endpoint;
    auto self = self_desc(cfg.rdzv, cfg.group, first, false);
    rdzv::EtcdRunOptions run;
    run.key_prefix = cfg.rdzv.etcd.key_prefix;
    run.run_id = cfg.rdzv.rdzv_id;
    run.node_id = self.id();
    run.lease_ttl = rdzv::lease_ttl(settings);
    run.deadline = settings.join_timeout;
    run.token = rdzv_token(cfg.rdzv, env);
    auto notice = etcd_notice(cfg.rdzv, run, *etcd_);
    run.liveness_wait = rdzv::keep_alive_bound(settings) + settings.keep_alive_interval;
    run.end_record_ttl = cfg.rdzv.etcd.end_record_ttl;
    auto opened = net::run_now(ctx, rdzv::EtcdRun::open(*etcd_, std::move(run)));
    if (!opened) {
      throw Fatal(opened.error());
    }
    run_ = std::move(*opened);
    notice.generation = run_->generation();
    notice.lease = run_->lease_id();
    notice_.reset(std::move(notice));
    run_->set_lease_listener([this](etcd::LeaseId lease) { notice_.set_lease(lease); });
    settings.incomplete_hint =
        config::render_rendezvous_hint(cfg, first, host::is_loopback_name(first.host));
    parts_.dyn = rdzv::DynamicRendezvous::create(ctx, run_->kv(), settings, self, clock);
    parts_.dyn->hooks().run_end = [etcd_run = run_.get()] { return etcd_run->run_end(); };
    agent::ElasticOptions elastic;
    elastic.store = first;
    elastic.advertise_addr = self.addr;
    auto* etcd_run = run_.get();
    elastic.finish = [etcd_run](rdzv::Leaving how) -> asio::awaitable<void> {
      co_await etcd_run->finish(how);
    };
    elastic.on_round = [this](std::optional<int> round) { notice_.set_round(round); };
    elastic.on_done = [this] { notice_.set_done(); };
    parts_.rdzv = std::make_unique<agent::ElasticRendezvous>(ctx, cfg.rdzv, cfg.group, parts_.dyn,
                                                             stores_, elastic);
  }

 private:
  ElasticParts& parts() override { return parts_; }
  std::unique_ptr<etcd::Client> etcd_;  ///< declared first: outlives the rest
  std::unique_ptr<rdzv::EtcdRun> run_;  ///< this agent's lease and the run's generation
  TcpStoreDuties stores_;               ///< no rendezvous store here: the workers' store only
  ElasticParts parts_;
};

}  // namespace

std::unique_ptr<RendezvousBackend> make_etcd_backend(asio::io_context& ctx,
                                                     const config::LaunchConfig& cfg,
                                                     const util::Env& env,
                                                     const util::Clock& clock) {
  return std::make_unique<EtcdBackend>(ctx, cfg, env, clock);
}

}  // namespace ddprun::backend
