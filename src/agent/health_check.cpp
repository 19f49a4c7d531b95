#include "ddprun/agent/health_check.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ddprun::agent {

namespace {

constexpr std::uint64_t k_mib = 1024 * 1024;

bool is_blank(const std::string& line) {
  return std::all_of(line.begin(), line.end(), [](char c) { return c == ' ' || c == '\t'; });
}

std::string seconds_text(std::chrono::milliseconds d) {
  return fmt::format("{:g}", static_cast<double>(d.count()) / 1000.0);
}

std::string how_it_ended(const CheckEnd& end) {
  switch (end.how) {
    case CheckEnd::How::timed_out:
      return "timed out after " + seconds_text(end.timeout) + " s (--health-check-timeout)";
    case CheckEnd::How::not_started:
      return "could not start: " + end.error;
    case CheckEnd::How::exited:
      break;
  }
  if (end.exit.signaled) {
    return "killed by " + process::signal_name(end.exit.signal);
  }
  return "exit status " + std::to_string(end.exit.exit_status);
}

std::uint64_t used_mib(const host::GpuMemory& gpu) { return gpu.used_bytes / k_mib; }

}  // namespace

HealthVerdict judge_health_check(const CheckEnd& end, const std::vector<std::string>& tail) {
  HealthVerdict v;
  for (const auto& line : tail) {
    if (!is_blank(line)) {
      v.lines.push_back(line);
    }
  }
  if (v.lines.size() > k_health_tail_lines) {
    v.lines.erase(v.lines.begin(),
                  v.lines.end() - static_cast<std::ptrdiff_t>(k_health_tail_lines));
  }
  v.healthy = end.how == CheckEnd::How::exited && end.exit.success();
  if (v.healthy) {
    return v;
  }
  const std::string how = how_it_ended(end);
  v.reason = "health check failed: " + (v.lines.empty() ? how : v.lines.back() + " (" + how + ")");
  return v;
}

GpuWaitStep decide_gpu_wait(const std::vector<host::GpuMemory>& now, std::uint64_t tolerance_mib,
                            util::SteadyTime started, util::SteadyTime at,
                            std::chrono::milliseconds bound) {
  GpuWaitStep step;
  for (const auto& gpu : now) {
    if (gpu.used_bytes >= tolerance_mib * k_mib) {
      step.busy.push_back(gpu);
    }
  }
  if (step.busy.empty()) {
    return step;
  }
  const auto end = started + bound;
  if (at >= end) {
    step.kind = GpuWaitStep::Kind::unhealthy;
    return step;
  }
  step.kind = GpuWaitStep::Kind::wait;
  step.next = std::min(at + k_gpu_memory_poll, end);
  return step;
}

std::string render_gpu(const host::GpuMemory& gpu) {
  return "GPU " + std::to_string(gpu.index) + (gpu.uuid.empty() ? "" : " (" + gpu.uuid + ")");
}

std::string render_gpu_wait_done(const std::vector<host::GpuMemory>& first_busy,
                                 std::chrono::milliseconds waited, std::uint64_t tolerance_mib) {
  std::string out = "waited " + seconds_text(waited) + " s for the GPUs' memory to fall under " +
                    std::to_string(tolerance_mib) + " MiB:";
  for (std::size_t i = 0; i < first_busy.size(); ++i) {
    out += fmt::format("{} {} had {} MiB used", i == 0 ? "" : ",", render_gpu(first_busy[i]),
                       used_mib(first_busy[i]));
  }
  return out;
}

std::string render_gpu_unhealthy(const std::vector<host::GpuMemory>& busy,
                                 std::chrono::milliseconds bound, std::uint64_t tolerance_mib) {
  std::string out = "GPU memory not freed:";
  for (std::size_t i = 0; i < busy.size(); ++i) {
    out += fmt::format("{} {} still has {} MiB used", i == 0 ? "" : ",", render_gpu(busy[i]),
                       used_mib(busy[i]));
  }
  return out + " after " + seconds_text(bound) + " s (--gpu-memory-wait; tolerance " +
         std::to_string(tolerance_mib) + " MiB)";
}

}  // namespace ddprun::agent
