#pragma once
// `ddprun status`: reads a c10d rendezvous state from its store and prints it.
//
//   ddprun status --rdzv-endpoint HOST[:PORT] [--rdzv-id ID] [--timeout SECONDS] [--json]
//
// Exit codes: 0 printed; 1 store unreachable, no state for that run id, or an unreadable state
// (one line on stderr); 2 usage error.

#include <string>
#include <vector>

namespace ddprun::status {

inline constexpr int k_default_rdzv_port = 29400;  ///< torchrun's c10d default
inline constexpr const char* k_default_run_id = "none";
inline constexpr double k_default_timeout_s = 5.0;

/// Runs the command. `args` are the words after "ddprun" (a leading "status" is skipped).
int status_command(const std::vector<std::string>& args);

}  // namespace ddprun::status
