// One agent's place in an etcd-v3 run over its life: opening it (the lease, then joining or
// starting a generation: etcd_run_join.cpp), keeping the lease or taking a new one, and
// leaving: the last agent out of a generation removes it, unless it is a node left out of a
// job that goes on (its record stays for the agents still to come).

#include "ddprun/rdzv/etcd_run.hpp"

#include "ddprun/etcd/codec.hpp"
#include "ddprun/rdzv/etcd_layout.hpp"
#include "ddprun/rdzv/state.hpp"
#include "ddprun/util/backoff.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace ddprun::rdzv {
namespace {

using etcd::TxnOp;
using Clock = std::chrono::steady_clock;

/// How often an agent leaving an ended job looks whether the others have gone.
constexpr std::chrono::milliseconds k_alone_poll{200};

std::string members_text(const etcd::Client& client) {
  return etcd::to_string(client.options().endpoints);
}

/// The pause before retry `attempt`, spread at random (etcd_retry_pause), at most `at_most`.
asio::awaitable<void> pause(const asio::any_io_executor& ex, int attempt,
                            std::chrono::milliseconds at_most = std::chrono::hours(1)) {
  asio::steady_timer timer(ex, std::min(etcd_retry_pause(attempt, util::random_spread()), at_most));
  boost::system::error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

Error gave_up(const etcd::Client& client, const EtcdRunOptions& o, const Error& last) {
  if (last.code == ErrorCode::config) {  // TLS files, auth: etcd answered, retrying cannot help
    return make_error(ErrorCode::config, fmt::format("etcd-v3 rendezvous '{}' at {}: {}", o.run_id,
                                                     members_text(client), last.message));
  }
  return make_error(
      ErrorCode::io,
      fmt::format("etcd-v3 rendezvous '{}': no etcd member of {} answered within the join "
                  "timeout ({} s): {}",
                  o.run_id, members_text(client),
                  std::chrono::duration_cast<std::chrono::seconds>(o.deadline).count(),
                  last.message));
}

/// Retries `call` until it succeeds, fails with a config error (TLS files, auth: retrying
/// cannot help) or `until` passes.
template <typename Call>
auto retrying(etcd::Client& client, Clock::time_point until, Call call) -> decltype(call()) {
  for (int attempt = 0;; ++attempt) {
    auto r = co_await call();
    const auto now = Clock::now();
    if (r || r.error().code == ErrorCode::config || now >= until) {
      co_return r;
    }
    spdlog::debug("etcd-v3 rendezvous: {} (retrying)", r.error().message);
    co_await pause(client.executor(), attempt,
                   std::chrono::duration_cast<std::chrono::milliseconds>(until - now));
  }
}

}  // namespace

struct EtcdRun::Life {
  bool alive = true;
};

EtcdRun::EtcdRun(etcd::Client& client, EtcdRunOptions options, etcd::Lease lease)
    : client_(client),
      options_(std::move(options)),
      lease_(lease),
      run_prefix_(etcd_run_prefix(options_.key_prefix, options_.run_id)),
      life_(std::make_shared<Life>()) {
  keep_lease();
}

EtcdRun::~EtcdRun() { life_->alive = false; }

void EtcdRun::abandon() {
  life_->alive = false;
  keeper_.reset();
  finished_ = true;
}

// The keeper reports a loss once and ends; the callback never runs after the keeper is gone.
void EtcdRun::keep_lease() {
  keeper_ = std::make_unique<etcd::LeaseKeeper>(client_, lease_, [this](const Error& e) {
    spdlog::error(
        "etcd-v3 rendezvous '{}': this agent's lease is lost ({}): its keep-alive keys are "
        "gone, so the other nodes count it as dead; taking a new lease",
        options_.run_id, e.message);
    asio::co_spawn(client_.executor(), replace_lease(life_), asio::detached);
  });
  keeper_->start();
}

// `life` says whether this object still exists after each suspension.
asio::awaitable<void> EtcdRun::replace_lease(std::shared_ptr<Life> life) {
  bool granted = false;
  const auto id = etcd::new_lease_id();  // kept: a grant sent again finds the lease it made
  for (int attempt = 0; life->alive && !finished_; ++attempt) {
    if (!granted) {
      auto lease = co_await client_.lease_grant(options_.lease_ttl, id);
      if (!life->alive || finished_) {
        co_return;  // a lease granted now expires unrenewed
      }
      if (lease) {
        granted = true;
        lease_ = *lease;
        etcd_kv_->set_lease(lease_.id);
        keep_lease();
        if (lease_listener_) {
          lease_listener_(lease_.id);
        }
      } else {
        spdlog::debug("etcd-v3 rendezvous '{}': taking a new lease: {}", options_.run_id,
                      lease.error().message);
      }
    }
    if (granted) {
      auto rewritten = co_await rewrite_own_keys(*life);
      if (!life->alive || finished_ || rewritten) {
        co_return;
      }
      spdlog::debug("etcd-v3 rendezvous '{}': writing this agent's keys again: {}", options_.run_id,
                    rewritten.error().message);
    }
    co_await pause(client_.executor(), attempt);
  }
}

asio::awaitable<Result<void>> EtcdRun::rewrite_own_keys(const Life& life) {
  const auto alive_key =
      etcd_alive_prefix(etcd_generation_prefix(run_prefix_, generation_)) + options_.node_id;
  etcd::PutRequest alive{alive_key, options_.node_id, lease_.id};  // named: see heartbeat_after
  auto put = co_await client_.put(std::move(alive));
  if (!life.alive || !put) {
    co_return put ? make_error(ErrorCode::closed, "etcd-v3 rendezvous: ended") : put.error();
  }
  auto n = co_await etcd_kv_->rewrite_leased();
  if (!n) {
    co_return n.error();
  }
  spdlog::warn(
      "etcd-v3 rendezvous '{}': this agent holds a new lease ({}) and wrote its alive key and "
      "its {} other keys again",
      options_.run_id, lease_.id, *n);
  co_return Result<void>{};
}

asio::awaitable<Result<std::unique_ptr<EtcdRun>>> EtcdRun::open(etcd::Client& client,
                                                                EtcdRunOptions options) {
  const auto until = Clock::now() + options.deadline;
  const auto ttl = options.lease_ttl;
  const auto id = etcd::new_lease_id();  // kept: a grant sent again finds the lease it made
  auto lease = co_await retrying(client, until, [&] { return client.lease_grant(ttl, id); });
  if (!lease) {
    co_return gave_up(client, options, lease.error());
  }
  std::unique_ptr<EtcdRun> run(new EtcdRun(client, std::move(options), *lease));
  auto joined = co_await retrying(client, until, [&]() -> asio::awaitable<Result<bool>> {
    for (;;) {
      auto r = co_await run->try_join();
      if (!r || *r) {
        co_return r;
      }
    }
  });
  if (!joined) {
    auto e = gave_up(client, run->options_, joined.error());
    co_await run->finish();
    co_return e;
  }
  co_return run;
}

void EtcdRun::use_generation(std::int64_t generation) {
  generation_ = generation;
  const auto prefix = etcd_generation_prefix(run_prefix_, generation);
  const std::string run_id = options_.run_id;
  etcd_kv_ = std::make_unique<EtcdKv>(client_, prefix, lease_.id, [run_id](const std::string& key) {
    return is_node_own_key(run_id, key);
  });
  signed_kv_.reset();
  if (options_.token) {
    signed_kv_ = std::make_unique<SignedKv>(*etcd_kv_, *options_.token);
  }
}

Kv& EtcdRun::kv() {
  if (signed_kv_) {
    return *signed_kv_;
  }
  return *etcd_kv_;
}

asio::awaitable<void> EtcdRun::finish(Leaving how) {
  if (std::exchange(finished_, true)) {
    co_return;
  }
  etcd_kv_->close_feeds();
  co_await keeper_->stop();
  co_await let_go();
  if (generation_ == 0) {
    co_return;
  }
  auto alive = co_await someone_alive();
  if (alive && !alive->empty() && how == Leaving::job_ended) {
    alive = co_await wait_until_alone(*alive);
  }
  if (!alive || !alive->empty()) {
    if (alive) {
      spdlog::info("etcd-v3 rendezvous '{}': leaving generation {} to {} and the others in it",
                   options_.run_id, generation_, *alive);
    }
    co_return;
  }
  if (how == Leaving::left_out) {
    spdlog::info(
        "etcd-v3 rendezvous '{}': keeping generation {} with no agent in it: it records that "
        "this node is left out, for the nodes still to come",
        options_.run_id, generation_);
    co_return;
  }
  // The last one out: remove the generation, and the generation key while it still names it;
  // a job that ended leaves the record of how, for its agents that come back later.
  const auto gen_prefix = etcd_generation_prefix(run_prefix_, generation_);
  const std::string gen_key = etcd_generation_key(run_prefix_);
  etcd::TxnRequest t{{etcd::value_is(gen_key, std::to_string(generation_))},
                     {TxnOp::erase({gen_key, {}}), TxnOp::erase(etcd::prefix_delete(gen_prefix))},
                     {TxnOp::erase(etcd::prefix_delete(gen_prefix))}};
  if (how == Leaving::job_ended) {
    if (auto record = co_await end_record()) {
      t.success.push_back(TxnOp::set(*record));
      t.failure.push_back(TxnOp::set(*record));
    }
  }
  if (auto r = co_await client_.txn(std::move(t)); !r) {
    spdlog::warn("etcd-v3 rendezvous '{}': removing generation {}: {}", options_.run_id,
                 generation_, r.error().message);
    co_return;
  }
  spdlog::info("etcd-v3 rendezvous '{}': removed generation {} (no agent left in it)",
               options_.run_id, generation_);
  co_await remove_abandoned(generation_ - 1);
}

asio::awaitable<std::optional<etcd::PutRequest>> EtcdRun::end_record() {
  std::vector<std::string> keys{state_key(options_.run_id)};
  auto header = co_await kv().multi_get_now(std::move(keys));
  if (!header || header->front().empty()) {
    co_return std::nullopt;
  }
  auto h = decode_header(header->front());
  const auto end = h ? run_end_of(*h) : std::nullopt;
  if (!end) {
    co_return std::nullopt;
  }
  auto lease = co_await client_.lease_grant(options_.end_record_ttl, etcd::new_lease_id());
  if (!lease) {
    spdlog::warn("etcd-v3 rendezvous '{}': no record of how generation {} ended: {}",
                 options_.run_id, generation_, lease.error().message);
    co_return std::nullopt;
  }
  const auto key = etcd_end_record_key(run_prefix_, generation_);
  std::string value = encode_run_end(*end);
  if (options_.token) {
    value = sign_entry(*options_.token, key, "", value);
  }
  co_return etcd::PutRequest{key, std::move(value), lease->id};
}

asio::awaitable<Result<std::optional<RunEnd>>> EtcdRun::run_end() {
  const auto key = etcd_end_record_key(run_prefix_, generation_);
  auto got = co_await client_.get(key);
  if (!got) {
    co_return got.error();
  }
  if (!*got) {
    co_return std::optional<RunEnd>();
  }
  std::string value = (*got)->value;
  if (options_.token) {
    auto opened = open_entry(*options_.token, key, value);
    if (!opened) {
      co_return opened.error();
    }
    value = std::move(*opened);
  }
  auto end = decode_run_end(value);
  if (!end) {
    co_return end.error();
  }
  co_return std::optional<RunEnd>(std::move(*end));
}

// Revoking the lease deletes this agent's keys. When it fails (a timeout on a loaded cluster,
// a lease that already ran out), the alive key is deleted by name: left until its lease runs
// out, it would tell every other agent leaving now that this one is still there, and nobody
// would remove the generation.
asio::awaitable<void> EtcdRun::let_go() {
  auto revoked = co_await client_.lease_revoke(lease_.id);
  if (revoked) {
    co_return;
  }
  spdlog::warn(
      "etcd-v3 rendezvous '{}': revoking this agent's lease: {} (its keys expire within "
      "{} s)",
      options_.run_id, revoked.error().message, lease_.ttl.count());
  if (generation_ == 0) {
    co_return;
  }
  const auto alive_key =
      etcd_alive_prefix(etcd_generation_prefix(run_prefix_, generation_)) + options_.node_id;
  etcd::DeleteRequest own{alive_key, {}};
  if (auto erased = co_await client_.erase(std::move(own)); !erased) {
    spdlog::warn("etcd-v3 rendezvous '{}': deleting this agent's alive key: {}", options_.run_id,
                 erased.error().message);
  }
}

// Of agents leaving at once, each deletes its alive key before it reads the others' (a
// linearizable read), so the last of them to read sees none.
asio::awaitable<std::optional<std::string>> EtcdRun::someone_alive() {
  const auto gen_prefix = etcd_generation_prefix(run_prefix_, generation_);
  auto anyone = co_await client_.range(etcd::prefix_range(etcd_alive_prefix(gen_prefix), 1));
  if (!anyone) {
    spdlog::warn(
        "etcd-v3 rendezvous '{}': reading who is still in generation {}: {} (its keys "
        "stay until the next run's last agent removes them)",
        options_.run_id, generation_, anyone.error().message);
    co_return std::nullopt;
  }
  co_return anyone->kvs.empty() ? std::string() : anyone->kvs.front().value;
}

asio::awaitable<std::optional<std::string>> EtcdRun::wait_until_alone(std::string alive) {
  const auto bound = options_.lease_ttl + std::chrono::seconds(1);
  spdlog::info(
      "etcd-v3 rendezvous '{}': the job has ended; waiting up to {} s for {} to leave "
      "generation {} (a dead agent's keys go when its lease runs out)",
      options_.run_id, bound.count(), alive, generation_);
  const auto deadline = Clock::now() + bound;
  asio::steady_timer poll(client_.executor());
  std::optional<std::string> now = std::move(alive);
  while (now && !now->empty() && Clock::now() < deadline) {
    poll.expires_after(k_alone_poll);
    boost::system::error_code ec;
    co_await poll.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    now = co_await someone_alive();
  }
  co_return now;
}

// A closed generation whose last agent died while leaving (its alive key outlived it until its
// lease ran out) has nobody left to remove it; the next generation's last agent out does.
asio::awaitable<void> EtcdRun::remove_abandoned(std::int64_t generation) {
  if (generation < 1) {
    co_return;
  }
  const auto gen_prefix = etcd_generation_prefix(run_prefix_, generation);
  auto anyone = co_await client_.range(etcd::prefix_range(etcd_alive_prefix(gen_prefix), 1));
  if (!anyone || !anyone->kvs.empty()) {
    co_return;
  }
  auto removed = co_await client_.erase(etcd::prefix_delete(gen_prefix));
  if (removed && removed->deleted > 0) {
    spdlog::info("etcd-v3 rendezvous '{}': removed generation {} (left behind by agents that died)",
                 options_.run_id, generation);
  }
}

}  // namespace ddprun::rdzv
