#include "worker_io.hpp"

#include <spdlog/spdlog.h>

namespace ddprun::app {

namespace {

class InheritIo final : public agent::WorkerIo {
 public:
  Result<void> begin_attempt(int, int) override { return {}; }
  std::string error_file(int) const override { return ""; }
  Result<agent::ChildFds> open(const agent::WorkerRanks&) override { return agent::ChildFds{}; }
  void spawned(int) override {}
  asio::awaitable<void> drain(std::chrono::milliseconds) override { co_return; }
  std::vector<std::string> stderr_tail(int) const override { return {}; }
  std::string run_dir() const override { return ""; }
};

}  // namespace

std::unique_ptr<agent::WorkerIo> make_worker_io(asio::io_context&, const config::LaunchConfig&) {
  return std::make_unique<InheritIo>();
}

agent::SupervisorHooks make_hooks(const config::LaunchConfig&, agent::WorkerIo&) {
  agent::SupervisorHooks hooks;
  hooks.failed = [](const std::vector<agent::WorkerFailure>& failures) {
    for (const auto& f : failures) {
      spdlog::error("failed (exitcode: {}) local_rank: {} (pid: {})", f.exit.code(),
                    f.ranks.local_rank, f.pid);
    }
  };
  return hooks;
}

}  // namespace ddprun::app
