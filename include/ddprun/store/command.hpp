#pragma once
// `ddprun store ...`: a standalone store server and a small client for inspection.
//
//   ddprun store serve [--host H] [--port P] [--max-connections N] [--legacy-dialect D]
//   ddprun store get KEY | set KEY VALUE | add KEY N | del KEY | keys   [--endpoint H:P]
//                                                     [--dialect D] [--token-file PATH]
//
// Keys are raw wire keys (PyTorch's TCPStore adds a leading "/": torch key "k" is "/k"). The
// agents' keys (ddprun/...) and their listing use the rendezvous token, found as the agents find
// it. The client verbs probe the server's dialect (store/dialect_probe.hpp) unless --dialect
// names it, and `set` succeeds only once a CHECK confirms the key.

#include "ddprun/util/env.hpp"
#include "ddprun/util/result.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ddprun::store {

/// Runs the subcommand. `args` are the words after "ddprun store" (a leading "store" is
/// skipped). Returns the exit code: 0 ok, 1 runtime failure (missing key, unreachable store),
/// 2 usage error (one line on stderr). `env` is ddprun's environment (the rendezvous token).
int store_command(const std::vector<std::string>& args, const util::Env& env);

/// "host:port", "[v6addr]:port" -> (host, port). Error names the text and the expected form.
Result<std::pair<std::string, std::uint16_t>> parse_endpoint(std::string_view text);

}  // namespace ddprun::store
