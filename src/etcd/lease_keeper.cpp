// The keep-alive loop: sleep (RenewalSchedule: about TTL/3, soon again after a renewal no
// member answered), renew once (a POST to lease/keepalive, with the client's failover), repeat.
// The lease is lost when etcd answers TTL 0 (it expired) or when no renewal was answered for
// two TTLs; then on_lost runs once and the loop ends. stop() wakes the sleep and waits for the
// loop to finish its current call.

#include "ddprun/etcd/client.hpp"
#include "ddprun/etcd/renewal.hpp"
#include "ddprun/util/backoff.hpp"

#include <fmt/format.h>

namespace ddprun::etcd {

struct LeaseKeeper::State {
  State(const asio::any_io_executor& ex, Lease l, OnLost cb)
      : lease(l), on_lost(std::move(cb)), sleep(ex), done(ex) {
    done.expires_at(asio::steady_timer::time_point::max());
  }
  Lease lease;
  OnLost on_lost;
  asio::steady_timer sleep;
  asio::steady_timer done;  // cancelled when the loop ends
  bool running = false;
  bool stopping = false;
  bool lost = false;
};

namespace {

using State = LeaseKeeper::State;

void report_lost(State& s, const Error& e) {
  s.lost = true;
  if (s.on_lost) {
    s.on_lost(e);
  }
}

asio::awaitable<void> keep_alive(Client& client, std::shared_ptr<State> s) {
  const RenewalSchedule schedule{
      std::chrono::duration_cast<std::chrono::milliseconds>(s->lease.ttl)};
  auto last_ok = std::chrono::steady_clock::now();
  int failures = 0;
  while (!s->stopping) {
    const double spread = util::random_spread();
    boost::system::error_code ec;
    s->sleep.expires_after(failures == 0 ? schedule.after_renewed(spread)
                                         : schedule.after_failed(failures, spread));
    co_await s->sleep.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (s->stopping) {
      break;
    }
    auto r = co_await client.lease_keepalive_once(s->lease.id);
    if (s->stopping) {
      break;
    }
    const auto now = std::chrono::steady_clock::now();
    if (r && r->ttl.count() > 0) {
      last_ok = now;
      failures = 0;
      continue;
    }
    if (r) {
      report_lost(*s,
                  make_error(ErrorCode::closed, fmt::format("etcd lease {} expired", s->lease.id)));
      break;
    }
    ++failures;
    const auto unanswered = std::chrono::duration_cast<std::chrono::milliseconds>(now - last_ok);
    if (schedule.gives_up(unanswered)) {
      report_lost(
          *s, make_error(r.error().code,
                         fmt::format("etcd lease {}: no renewal answered for {} s: {}", s->lease.id,
                                     unanswered.count() / 1000, r.error().message)));
      break;
    }
  }
  s->running = false;
  s->done.cancel();
}

}  // namespace

LeaseKeeper::LeaseKeeper(Client& client, Lease lease, OnLost on_lost)
    : client_(client),
      state_(std::make_shared<State>(client.executor(), lease, std::move(on_lost))) {}

LeaseKeeper::~LeaseKeeper() {
  state_->stopping = true;
  try {
    state_->sleep.cancel();
  } catch (...) {
    // A timer's cancel() throws only on an OS error; the loop then ends at its next wake-up.
  }
}

void LeaseKeeper::start() {
  if (state_->running) {
    return;
  }
  state_->running = true;
  state_->stopping = false;
  asio::co_spawn(client_.executor(), keep_alive(client_, state_), asio::detached);
}

asio::awaitable<void> LeaseKeeper::stop() {
  state_->stopping = true;
  state_->sleep.cancel();
  auto keep = state_;
  while (keep->running) {
    boost::system::error_code ec;
    co_await keep->done.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

bool LeaseKeeper::is_running() const { return state_->running; }
bool LeaseKeeper::is_lost() const { return state_->lost; }

}  // namespace ddprun::etcd
