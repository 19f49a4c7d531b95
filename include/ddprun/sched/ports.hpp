#pragma once
// Rendezvous ports derived from a job id, so that every node of a job computes the same list
// without talking to the others, and two jobs sharing a head node rarely collide.

#include "ddprun/util/default_ports.hpp"
#include "ddprun/util/result.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::sched {

/// Lowest derived port: torchrun's c10d default.
inline constexpr int k_port_base = util::k_default_c10d_port;
/// Derived ports lie in [k_port_base, k_port_base + k_port_span): below Linux's default
/// ephemeral range (32768+), so an outgoing connection never squats on them.
inline constexpr int k_port_span = 3000;
/// How many ports candidate_ports lists.
inline constexpr int k_port_candidates = 8;

/// k_port_candidates ports starting at k_port_base + key % k_port_span, consecutive, wrapping
/// inside the span. The head node binds the first free one; the other nodes try them in order.
std::vector<int> candidate_ports(std::uint64_t key);

/// Ports for messages: "30645-30652" when consecutive, else "12000, 12005".
std::string describe_ports(const std::vector<int>& ports);

/// Slurm's SLURM_STEP_RESV_PORTS ("12000-12010" or "12000") as a list of ports.
Result<std::vector<int>> parse_port_range(std::string_view text);

/// FNV-1a of a textual job id (Flux's F58 ids, PBS ids with a server part) for candidate_ports.
std::uint64_t port_key_of(std::string_view job_id);

}  // namespace ddprun::sched
