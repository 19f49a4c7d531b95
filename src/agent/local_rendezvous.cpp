#include "ddprun/agent/local_rendezvous.hpp"

#include "ddprun/rdzv/crash_loop.hpp"

namespace ddprun::agent {

LocalRendezvous::LocalRendezvous(asio::io_context& ctx, const config::RendezvousPlan& cfg,
                                 const config::WorkerGroup& group, MasterEndpoint master,
                                 std::function<void()> before_round)
    : cfg_(cfg),
      group_(group),
      master_(std::move(master)),
      before_round_(std::move(before_round)),
      watch_timer_(ctx) {}

asio::awaitable<Result<Round>> LocalRendezvous::next_round(int restart_count) {
  watch_timer_.cancel();  // ends the previous round's watch()
  if (rdzv::is_crash_loop(streak_, cfg_.rdzv_settings.crash_loop_limit)) {
    co_return make_error(ErrorCode::given_up,
                         "stopped: " + rdzv::render_crash_loop(streak_, cfg_.rdzv_settings));
  }
  if (before_round_) {
    before_round_();
  }
  Round round;
  round.round_number = round_++;
  round.info = RoundInfo{master_.addr,        master_.port, restart_count,
                         group_.max_restarts, cfg_.rdzv_id, master_.use_agent_store,
                         group_.role};
  const int n = group_.nproc_per_node;
  round.ranks = worker_ranks(NodePlace{0, 1, n, 0, n, 0, n});  // the one node is the world
  co_return round;
}

asio::awaitable<rdzv::CrashStreak> LocalRendezvous::report_failure(FailureNote note) {
  rdzv::FailedRound report;
  report.at = util::wall_ms(note.at);
  report.signature = std::move(note.signature);
  report.quick = note.quick;
  streak_ = rdzv::next_streak(streak_, report);
  co_return streak_;
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
  return std::string(config::to_string(cfg_.rdzv_backend)) + " single-node rendezvous '" +
         cfg_.rdzv_id + "'";
}

}  // namespace ddprun::agent
