#include "ddprun/agent/unkillable.hpp"

namespace ddprun::agent {

std::string render_stuck(const StuckWorker& worker, std::chrono::milliseconds bound) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(bound).count();
  std::string s = "local rank " + std::to_string(worker.ranks.local_rank) + " (rank " +
                  std::to_string(worker.ranks.rank) + ", pid " + std::to_string(worker.pid) +
                  ") is still alive " + std::to_string(seconds) + " s after SIGKILL: state " +
                  process::describe_state(worker.state.state);
  if (!worker.state.wchan.empty()) {
    s += ", waiting in the kernel at " + worker.state.wchan;
  }
  return s + "; it cannot be killed (a hung GPU driver or file system?)";
}

HealthVerdict unkillable_verdict(const std::vector<StuckWorker>& stuck,
                                 std::chrono::milliseconds bound) {
  HealthVerdict v;
  if (stuck.empty()) {
    return v;
  }
  v.healthy = false;
  v.reason = render_stuck(stuck.front(), bound);
  if (stuck.size() > 1) {
    v.reason += " (and " + std::to_string(stuck.size() - 1) + " more worker(s))";
  }
  return v;
}

}  // namespace ddprun::agent
