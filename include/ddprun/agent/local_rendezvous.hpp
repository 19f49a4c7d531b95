#pragma once
// Single-node rendezvous: the whole job is this agent (--standalone, or --nnodes 1).
// Ranks are trivial; MASTER_ADDR/PORT come from the config or a free port.

#include "ddprun/agent/seams.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/rdzv/state.hpp"

#include <functional>
#include <optional>

namespace ddprun::agent {

/// Where workers find their store: hosted by the agent (port of its server) or by worker
/// rank 0 on a free port (1.13 behaviour, use_agent_store false).
struct MasterEndpoint {
  std::string addr;
  int port = 0;
  bool use_agent_store = false;
};

class LocalRendezvous final : public Rendezvous {
 public:
  /// `before_round` runs as each round forms (the app clears its workers' store there). `cfg`
  /// and `group` (the one node's workers) must outlive the rendezvous.
  LocalRendezvous(asio::io_context& ctx, const config::RendezvousPlan& cfg,
                  const config::WorkerGroup& group, MasterEndpoint master,
                  std::function<void()> before_round = {});

  asio::awaitable<Result<Round>> next_round(int restart_count) override;
  asio::awaitable<RdzvSignal> watch() override;
  /// Counts the same failure before progress, attempt after attempt: once that is a crash
  /// loop (rdzv/crash_loop.hpp, cfg.rdzv_settings' limit) next_round() gives up.
  asio::awaitable<rdzv::CrashStreak> report_failure(FailureNote note) override;
  asio::awaitable<void> exit_barrier(bool) override { co_return; }
  asio::awaitable<void> shutdown() override;
  asio::awaitable<void> leave(std::chrono::milliseconds) override { co_return; }
  std::string describe() const override;

 private:
  const config::RendezvousPlan& cfg_;
  const config::WorkerGroup& group_;
  MasterEndpoint master_;
  std::function<void()> before_round_;
  asio::steady_timer watch_timer_;
  int round_ = 0;
  rdzv::CrashStreak streak_;
};

}  // namespace ddprun::agent
