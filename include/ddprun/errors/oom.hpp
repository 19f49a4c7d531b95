#pragma once
// Was a SIGKILLed worker killed by the OOM killer? The decision is pure over two counter
// snapshots; read_oom_counters() is the small shell that fills them from /proc and /sys.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::errors {

/// OOM-kill counters; each is absent when its file is missing or unreadable.
struct OomCounters {
  std::optional<std::uint64_t> cgroup;  ///< our memory cgroup's oom_kill (v2 or v1)
  std::optional<std::uint64_t> system;  ///< /proc/vmstat oom_kill (whole machine)
};

/// The value of the "oom_kill N" line in memory.events, memory.oom_control or /proc/vmstat.
std::optional<std::uint64_t> parse_oom_kill_count(std::string_view text);

/// Candidate counter files for the memory cgroup named in /proc/self/cgroup's text:
/// v2 "0::/p" -> /sys/fs/cgroup/p/memory.events, v1 "N:...memory...:/p" ->
/// /sys/fs/cgroup/memory/p/memory.oom_control.
std::vector<std::string> memory_cgroup_files(std::string_view proc_self_cgroup);

/// True when the worker died of SIGKILL and a counter readable at both times increased.
bool oom_suspected(int exit_code, const OomCounters& before, const OomCounters& after);

/// Reads the counters now (shell; never fails, missing files give absent values).
OomCounters read_oom_counters();

}  // namespace ddprun::errors
