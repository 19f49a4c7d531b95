#pragma once
// What both modes of rdzv_scale_bench share: the command line, a simulated node's description
// and its rendezvous settings, and the summary of a set of completion times.

#include "ddprun/rdzv/settings.hpp"
#include "ddprun/rdzv/state.hpp"

#include <fmt/format.h>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace rdzv_scale {

using Clock = std::chrono::steady_clock;

struct Args {
  int nodes = 64;
  int processes = 0;  ///< 0: nodes and store in this process; P: P node processes + a store one
  std::string backend = "c10d";  ///< or "etcd-v3" (with --processes; --endpoint: the members)
  std::string endpoint;
  double timeout_seconds = 60;
  int poll_ms = 150;
  int jitter_ms = 300;
  int keep_alive_ms = 5000;    ///< keep_alive_interval (the agents' default); x3 is the bound
  int last_call_ms = 1000;     ///< last_call_timeout: how long a round of MIN..MAX waits for more
  double running_seconds = 0;  ///< multi-process: measure the running round's load this long
  bool lose_one = false;       ///< multi-process: then lose one node and time the re-form
  int connect_batch = 256;     ///< multi-process: connections opened at once before the start
  std::string times_file;      ///< multi-process: every node's join time (ms), one per line
  bool json = false;
};

/// What is wrong with a combination of options, or nullopt.
inline std::optional<std::string> misuse(const Args& a) {
  if (a.processes == 0 && (a.running_seconds > 0 || a.lose_one || a.backend != "c10d")) {
    return "--running-seconds, --lose-one and --backend etcd-v3 need --processes P (P >= 1)";
  }
  if (a.processes > a.nodes) {
    return fmt::format("--processes {}: expected at most --nodes ({})", a.processes, a.nodes);
  }
  if (a.processes > 0 && (a.backend == "etcd-v3") == a.endpoint.empty()) {
    return "--processes: --endpoint names the etcd members with --backend etcd-v3, and is not "
           "given with c10d (the bench starts its own store process)";
  }
  return std::nullopt;
}

inline constexpr int k_addr_block = 250;  ///< nodes per simulated /24, for distinct addresses

/// Raises the soft RLIMIT_NOFILE to the hard limit.
inline void raise_nofile() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
}

/// Simulated node `i`: a distinct address and pid, the node index the scheduler would give.
inline ddprun::rdzv::NodeDesc node(int i) {
  ddprun::rdzv::NodeDesc n;
  n.addr = fmt::format("10.{}.{}.{}", i / (k_addr_block * k_addr_block),
                       (i / k_addr_block) % k_addr_block, 1 + i % k_addr_block);
  n.pid = 1000 + i;
  n.node_index = i;
  return n;
}

/// The agents' defaults for a run of a.nodes nodes (all of them needed, or all but one when
/// one is to be lost), with the bench's poll and jitter.
inline ddprun::rdzv::RdzvSettings settings_of(const Args& a) {
  ddprun::rdzv::RdzvSettings s;
  s.run_id = "scale-bench";
  s.min_nodes = a.lose_one && a.nodes > 1 ? a.nodes - 1 : a.nodes;
  s.max_nodes = a.nodes;
  s.join_timeout = std::chrono::milliseconds(static_cast<long>(a.timeout_seconds * 1000));
  s.poll_interval = std::chrono::milliseconds(a.poll_ms);
  s.first_round_jitter = std::chrono::milliseconds(a.jitter_ms);
  s.keep_alive_interval = std::chrono::milliseconds(a.keep_alive_ms);
  s.last_call_timeout = std::chrono::milliseconds(a.last_call_ms);
  return s;
}

inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// The last and the median of completion times (0 when there are none).
struct Summary {
  double last_ms = 0;
  double median_ms = 0;
};

inline Summary summarize(std::vector<double> ms) {
  if (ms.empty()) {
    return {};
  }
  std::sort(ms.begin(), ms.end());
  return {ms.back(), ms[ms.size() / 2]};
}

}  // namespace rdzv_scale
