#include "ddprun/agent/elastic_rendezvous.hpp"

#include "ddprun/agent/stack_capture.hpp"
#include "ddprun/config/backends.hpp"
#include "ddprun/errors/node_stacks.hpp"
#include "ddprun/util/strings.hpp"

#include <spdlog/spdlog.h>

namespace ddprun::agent {

ElasticRendezvous::ElasticRendezvous(asio::io_context& ctx, const config::RendezvousPlan& cfg,
                                     const config::WorkerGroup& group,
                                     std::shared_ptr<rdzv::DynamicRendezvous> dyn,
                                     StoreDuties& stores, ElasticOptions options)
    : ctx_(ctx),
      cfg_(cfg),
      group_(group),
      dyn_(std::move(dyn)),
      stores_(stores),
      options_(std::move(options)) {}

/// The watch's coroutine reads `done` before touching the ElasticRendezvous, which sets it
/// before it goes away.
struct ElasticRendezvous::StoreWatch {
  explicit StoreWatch(asio::io_context& ctx) : timer(ctx) {}
  asio::steady_timer timer;
  bool done = false;
};

ElasticRendezvous::~ElasticRendezvous() {
  try {
    stop_store_watch();
  } catch (...) {
    // A timer's cancel() throws only on an OS error; the watch then ends with the io_context.
  }
}

void ElasticRendezvous::start_store_watch() {
  if (!stores_.has_client() || store_watch_ || stores_.client_connected()) {
    return;  // etcd-v3: the etcd client names unreachable members itself
  }
  store_watch_ = std::make_shared<StoreWatch>(ctx_);
  asio::co_spawn(ctx_, warn_while_store_silent(store_watch_), asio::detached);
}

void ElasticRendezvous::stop_store_watch() {
  if (store_watch_ && !store_watch_->done) {
    store_watch_->done = true;
    store_watch_->timer.cancel();
  }
}

asio::awaitable<void> ElasticRendezvous::warn_while_store_silent(
    std::shared_ptr<StoreWatch> watch) {
  auto wait = rdzv::first_incomplete_warning(dyn_->settings());
  std::chrono::milliseconds waited{0};
  for (bool with_hint = true;; with_hint = false) {
    watch->timer.expires_after(wait);
    boost::system::error_code ec;
    co_await watch->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (watch->done || stores_.client_connected()) {
      co_return;
    }
    waited += wait;
    const auto& s = dyn_->settings();
    spdlog::warn("{}", rdzv::render_store_unanswered(s, endpoint_text(), waited.count(),
                                                     (s.join_timeout - waited).count(), with_hint));
    wait = s.incomplete_warning_interval;
  }
}

Result<rdzv::MasterEndpoint> ElasticRendezvous::my_worker_store(const rdzv::RoundResult& round) {
  (void)round;
  if (options_.is_static) {
    stores_.clear_worker_keys();  // a clean slate for this round's workers
    return rdzv::MasterEndpoint{options_.store.host, options_.store.port};
  }
  return stores_.start_worker_store(options_.advertise_addr);
}

asio::awaitable<Result<Round>> ElasticRendezvous::next_round(int /*restart_count*/) {
  stores_.stop_worker_store();
  start_store_watch();
  if (options_.on_round) {
    options_.on_round(std::nullopt);
  }
  auto r = co_await dyn_->next_round();
  stop_store_watch();
  if (!r) {
    const bool shared_verdict = r.error().code == ErrorCode::given_up ||
                                (options_.is_static && r.error().code == ErrorCode::config);
    if (shared_verdict && stores_.hosting()) {
      // A crash loop, or two agents sharing a --node-rank: the peers read the same verdict and
      // stop with the same message, unless the store they read it from vanishes first.
      co_await linger_while_peers_connected();
    }
    co_return r.error();
  }
  if (options_.on_round) {
    options_.on_round(r->round);
  }
  // The store answered, so it exists: from now on losing it is a failure to report within
  // the keep-alive bound, not a reason to keep retrying for the whole join_timeout.
  stores_.bound_calls(rdzv::keep_alive_bound(dyn_->settings()));
  std::optional<rdzv::MasterEndpoint> mine;
  if (r->group_rank() == 0) {
    auto ep = my_worker_store(*r);
    if (!ep) {
      co_return ep.error();
    }
    mine = *ep;
  }
  auto master = co_await dyn_->exchange_master(*r, mine);
  if (!master) {
    co_return master.error();
  }
  const auto& a = r->assignment;
  group_world_size_ = a.group_world_size;
  Round round;
  round.round_number = r->round;
  // The job's count, not this agent's: the same on every node, kept across a rejoin.
  round.info = RoundInfo{master->addr, master->port, r->restarts, group_.max_restarts,
                         cfg_.rdzv_id, true,         group_.role};
  round.ranks =
      worker_ranks(NodePlace{a.group_rank, a.group_world_size, group_.nproc_per_node, a.worker_base,
                             a.world_size, a.role_base, a.role_world_size});
  co_return round;
}

asio::awaitable<RdzvSignal> ElasticRendezvous::watch() { co_return co_await dyn_->watch(); }

asio::awaitable<rdzv::CrashStreak> ElasticRendezvous::report_failure(FailureNote note) {
  rdzv::FailedRound report;
  report.at = util::wall_ms(note.at);
  report.reason = std::move(note.reason);
  report.signature = std::move(note.signature);
  report.quick = note.quick;
  auto streak = co_await dyn_->report_failure(std::move(report));
  if (!streak) {
    spdlog::warn("could not tell the other nodes that this group failed: {}",
                 streak.error().message);
    co_return rdzv::CrashStreak{};
  }
  co_return *streak;
}

asio::awaitable<std::string> ElasticRendezvous::exclusion() {
  auto e = co_await dyn_->exclude_if_failing();
  if (!e) {
    spdlog::warn("could not check whether this node is to be left out: {}", e.error().message);
    co_return std::string();
  }
  co_return *e ? rdzv::render_exclusion(**e, dyn_->settings()) : std::string();
}

asio::awaitable<void> ElasticRendezvous::mark_unhealthy(std::string reason) {
  if (auto ok = co_await dyn_->exclude_unhealthy(std::move(reason)); !ok) {
    spdlog::warn("{}", ok.error().message);
  }
}

asio::awaitable<void> ElasticRendezvous::withdraw() {
  stores_.stop_worker_store();
  dyn_->stop();
  if (stores_.hosting()) {
    spdlog::info(
        "this node hosts the rendezvous store: it serves the other nodes until the "
        "job ends");
    co_await serve_until_job_ends();
  }
  if (options_.finish) {
    co_await options_.finish(rdzv::Leaving::left_out);
  }
}

asio::awaitable<void> ElasticRendezvous::serve_until_job_ends() {
  asio::steady_timer timer(ctx_);
  const auto idle_bound = rdzv::keep_alive_bound(dyn_->settings());
  auto last_peer = dyn_->clock().now();
  while (dyn_->clock().now() - last_peer < idle_bound) {
    timer.expires_after(dyn_->settings().watch_interval);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (stores_.peer_connections() > 0) {
      last_peer = dyn_->clock().now();
    }
    auto closed = co_await dyn_->run_closed();
    if (closed && *closed) {
      co_await linger_while_peers_connected();
      co_return;
    }
  }
}

asio::awaitable<void> ElasticRendezvous::exit_barrier(bool success) {
  succeeded_ = success;
  if (!success) {
    co_return;
  }
  if (options_.on_done) {
    options_.on_done();
  }
  if (auto ok = co_await dyn_->exit_barrier(options_.exit_barrier_timeout); !ok) {
    spdlog::warn("exit barrier: {}", ok.error().message);
  }
}

asio::awaitable<void> ElasticRendezvous::linger_while_peers_connected() {
  asio::steady_timer timer(ctx_);
  auto deadline = dyn_->clock().now() + options_.host_linger;
  stores_.close_client();
  while (stores_.peer_connections() > 0 && dyn_->clock().now() < deadline) {
    timer.expires_after(std::chrono::milliseconds(50));
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

asio::awaitable<void> ElasticRendezvous::shutdown() {
  stores_.stop_worker_store();
  if (auto ok = co_await dyn_->shutdown(succeeded_); !ok) {
    spdlog::warn("closing the rendezvous: {}", ok.error().message);
  }
  if (stores_.hosting()) {
    co_await linger_while_peers_connected();
  }
  if (options_.finish) {
    co_await options_.finish(rdzv::Leaving::job_ended);
  }
}

asio::awaitable<void> ElasticRendezvous::leave(std::chrono::milliseconds bound) {
  stores_.stop_worker_store();
  auto ok = co_await dyn_->leave(bound);
  if (options_.finish) {
    co_await options_.finish(rdzv::Leaving::node_only);
  }
  if (!ok) {
    spdlog::warn("could not leave rendezvous '{}': {}", cfg_.rdzv_id, ok.error().message);
    co_return;
  }
  spdlog::info("left rendezvous '{}': the other nodes re-form without this one", cfg_.rdzv_id);
}

// A job-wide stacks request. The first node to ask in a round collects and prints the report;
// a node that asks while that request stands answers it instead (collect_stacks: nothing).
asio::awaitable<bool> ElasticRendezvous::request_stacks(std::string reason) {
  collecting_stacks_ = false;
  if (group_world_size_ <= 1) {
    co_return false;
  }
  auto keep = dyn_;  // the exchange is the rendezvous's: held while it runs
  auto request =
      co_await keep->stacks().request(std::move(reason), k_capture_bound + k_peer_stacks_bound);
  if (!request) {
    spdlog::warn("could not ask the other nodes for their workers' stacks: {}",
                 request.error().message);
    co_return false;
  }
  collecting_stacks_ = request->requester == dyn_->self().id();
  if (!collecting_stacks_) {
    spdlog::info("{} is collecting every node's stacks already ({}); this node answers it",
                 request->requester, request->reason);
  }
  co_return true;
}

std::string ElasticRendezvous::stacks_request() const {
  const auto& request = dyn_->stacks().last_request();
  return request ? request->reason : std::string();
}

asio::awaitable<void> ElasticRendezvous::answer_stacks(errors::NodeStacks mine) {
  auto keep = dyn_;
  if (auto ok = co_await keep->stacks().publish(errors::encode_node_stacks(mine)); !ok) {
    spdlog::warn("could not publish this node's stacks: {}", ok.error().message);
  }
}

asio::awaitable<PeerStacks> ElasticRendezvous::collect_stacks(std::chrono::milliseconds bound) {
  PeerStacks out;
  if (!std::exchange(collecting_stacks_, false)) {
    co_return out;
  }
  auto keep = dyn_;
  auto got = co_await keep->stacks().collect(bound);
  for (const auto& answer : got.answers) {
    auto decoded = errors::decode_node_stacks(answer.summary);
    if (decoded) {
      out.answers.push_back(std::move(*decoded));
    } else {
      out.missing.push_back("group rank " + std::to_string(answer.group_rank) +
                            " (unreadable answer: " + decoded.error().message + ")");
    }
  }
  out.missing.insert(out.missing.end(), got.missing_names.begin(), got.missing_names.end());
  if (!got.error.empty()) {
    spdlog::warn("collecting the other nodes' stacks: {}", got.error);
  }
  co_return out;
}

std::string ElasticRendezvous::endpoint_text() const {
  return config::endpoint_text(cfg_.rdzv_backend, options_.store, cfg_.etcd);
}

bool ElasticRendezvous::standing_by() const { return dyn_->standing_by(); }

std::string ElasticRendezvous::describe() const {
  return std::string(config::to_string(cfg_.rdzv_backend)) + " rendezvous '" + cfg_.rdzv_id +
         "' at " + endpoint_text() + " (" + std::to_string(cfg_.nnodes.min) + ":" +
         std::to_string(cfg_.nnodes.max) + " nodes)";
}

}  // namespace ddprun::agent
