#pragma once
// `ddprun status`: reads a rendezvous' state (c10d or static: from the agents' store; etcd-v3:
// from the run's current generation in etcd) and prints it.
//
//   ddprun status [--rdzv-backend c10d|static|etcd-v3] --rdzv-endpoint ENDPOINT [--rdzv-id ID]
//                 [--rdzv-conf K=V,...] [--timeout SECONDS] [--json]
//
// Exit codes: 0 printed; 1 store or etcd unreachable, no state for that run id, or an
// unreadable state (one line on stderr naming where); 2 usage error, or settings unusable
// before anything is contacted (the token, password or a TLS file).

#include "ddprun/util/env.hpp"

#include <string>
#include <vector>

namespace ddprun::status {

inline constexpr const char* k_default_run_id = "none";
inline constexpr double k_default_timeout_s = 5.0;

/// Runs the command. `args` are the words after "ddprun" (a leading "status" is skipped);
/// `env` is ddprun's environment (the job's token file, DDPRUN_RDZV_TOKEN).
int status_command(const std::vector<std::string>& args, const util::Env& env);

/// Every option spelling the command takes ("--rdzv-backend", "--rdzv_backend", ...,
/// "--help"), read from the parser status_command builds: the completions list these.
std::vector<std::string> status_options();

}  // namespace ddprun::status
