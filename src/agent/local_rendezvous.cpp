#include "ddprun/agent/local_rendezvous.hpp"

#include <netdb.h>
#include <unistd.h>

#include <cstring>

namespace ddprun::agent {

LocalRendezvous::LocalRendezvous(asio::io_context& ctx, const config::LaunchConfig& cfg,
                                 MasterEndpoint master, std::function<void()> before_round)
    : cfg_(cfg),
      master_(std::move(master)),
      before_round_(std::move(before_round)),
      watch_timer_(ctx) {}

asio::awaitable<Result<Round>> LocalRendezvous::next_round(int restart_count) {
  watch_timer_.cancel();  // ends the previous round's watch()
  if (before_round_) {
    before_round_();
  }
  Round round;
  round.round_number = round_++;
  round.info = RoundInfo{master_.addr,      master_.port, restart_count,
                         cfg_.max_restarts, cfg_.rdzv_id, master_.use_agent_store,
                         cfg_.role};
  const int n = cfg_.nproc_per_node;
  round.ranks = worker_ranks(NodePlace{0, 1, n, 0, n, 0, n});  // the one node is the world
  co_return round;
}

asio::awaitable<RdzvSignal> LocalRendezvous::watch() {
  watch_timer_.expires_at(std::chrono::steady_clock::time_point::max());
  boost::system::error_code ec;
  co_await watch_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  co_return RdzvSignal::none;
}

asio::awaitable<void> LocalRendezvous::shutdown() {
  watch_timer_.cancel();
  co_return;
}

std::string LocalRendezvous::describe() const {
  return cfg_.rdzv_backend + " single-node rendezvous '" + cfg_.rdzv_id + "'";
}

Result<int> find_free_port(const std::string& host) {
  asio::io_context ctx;
  boost::system::error_code ec;
  asio::ip::tcp::resolver resolver(ctx);
  auto results = resolver.resolve(host, "0", ec);
  if (ec || results.empty()) {
    return make_error(ErrorCode::io, "resolve " + host + ": " + ec.message());
  }
  asio::ip::tcp::acceptor acceptor(ctx);
  acceptor.open(results.begin()->endpoint().protocol(), ec);
  if (!ec) {
    acceptor.bind(results.begin()->endpoint(), ec);
  }
  if (ec) {
    return make_error(ErrorCode::io, "bind " + host + ":0: " + ec.message());
  }
  return static_cast<int>(acceptor.local_endpoint().port());
}

std::string host_fqdn() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) {
    return "localhost";
  }
  addrinfo hints{};
  hints.ai_flags = AI_CANONNAME;
  addrinfo* info = nullptr;
  if (getaddrinfo(name, nullptr, &hints, &info) != 0 || info == nullptr) {
    return name;
  }
  std::string fqdn = info->ai_canonname != nullptr ? info->ai_canonname : name;
  freeaddrinfo(info);
  return fqdn;
}

}  // namespace ddprun::agent
