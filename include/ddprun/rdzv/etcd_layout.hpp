#pragma once
// Where an etcd-v3 run keeps its keys, and which generation of an --rdzv-id a starting agent
// joins (docs/rendezvous.md, etcd-v3). Pure: the I/O is in etcd_run.hpp.
//
//   <key_prefix>/<rdzv_id>/run                  the current generation N (no lease)
//   <key_prefix>/<rdzv_id>/g<N>/alive/<node id> one per agent of generation N, on its lease
//   <key_prefix>/<rdzv_id>/g<N>/ddprun/rdzv/<rdzv_id>/...  the rendezvous' keys (state.hpp)
//   <key_prefix>/<rdzv_id>/ended/g<N>           how generation N's job ended (run_end.hpp), on a
//                                               lease of end_record_ttl (default one hour)
//
// A generation is one job. etcd outlives every job, so the keys of a finished or crashed job
// stay unless someone removes them: the last agent of a generation deletes it when it leaves,
// and a starting agent that finds a generation closed, with no live agent (every lease of a
// crashed job expired), or running a round without a single keep-alive for the keep-alive
// bound (a job crashed less than a lease TTL ago), starts generation N + 1 (deleting N unless
// it is closed with agents still leaving it). A job that did not end keeps its record of the
// nodes left out across that step (carried_header): an agent left out before any other
// arrived is the last one out of its generation, and keeps it for the next agent to read.

#include "ddprun/rdzv/settings.hpp"
#include "ddprun/rdzv/state.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ddprun::rdzv {

/// "<key_prefix>/<rdzv_id>/": every key of every generation of the run.
std::string etcd_run_prefix(std::string_view key_prefix, std::string_view run_id);
/// "<run prefix>run".
std::string etcd_generation_key(std::string_view run_prefix);
/// "<run prefix>g<N>/".
std::string etcd_generation_prefix(std::string_view run_prefix, std::int64_t generation);
/// "<run prefix>ended/g<N>": the record the last agent out of closed generation N leaves, so
/// that an agent of N that comes back after the end learns how it ended.
std::string etcd_end_record_key(std::string_view run_prefix, std::int64_t generation);
/// "<generation prefix>alive/".
std::string etcd_alive_prefix(std::string_view generation_prefix);
/// The generation a generation key's value names (a positive integer); nullopt for anything
/// else.
std::optional<std::int64_t> parse_generation(std::string_view value);

/// True for the keys one agent writes about itself (its keep-alive, its progress, its slot of a
/// round): on etcd they carry the agent's lease, so they vanish with a dead agent.
bool is_node_own_key(std::string_view run_id, std::string_view key);

/// What a starting agent read about the run.
struct GenerationView {
  std::optional<std::int64_t> current;  ///< the generation key; nullopt: absent (or unreadable)
  bool closed = false;                  ///< that generation's rendezvous is closed
  bool any_alive = false;               ///< an agent of that generation holds a live lease
  /// Its round is running (complete, not closed) yet no member wrote a keep-alive within the
  /// keep-alive bound: its agents are dead although their leases have not expired yet.
  bool silent = false;
};

struct GenerationChoice {
  std::int64_t generation = 1;
  bool start_new = true;  ///< create it (compare-and-swap on the generation key)
};

/// Join the current generation while it is open and someone is alive in it; else start the
/// next one.
GenerationChoice decide_generation(const GenerationView& view);
/// Whether starting the next generation should delete `view.current`'s keys: yes unless it is
/// closed with agents still leaving it (the last of them deletes it).
bool should_delete_previous(const GenerationView& view);

/// The header generation N + 1 starts with, given generation N's: a job that did not end (N
/// not closed) keeps the nodes it left out, so an agent that arrives after the last one of
/// N left still says which node is left out and why. nullopt: nothing to keep (no header).
std::optional<RoundHeader> carried_header(const RoundHeader& previous);

/// The TTL of an agent's lease on its own keys: the keep-alive bound (interval x attempts),
/// after which the rendezvous counts a silent node as dead anyway, in whole seconds (etcd's
/// unit, rounded up) and at least 3 s.
std::chrono::seconds lease_ttl(const RdzvSettings& settings);

/// How long an agent pauses before its `attempt`-th retry (0-based) of a call that found no
/// etcd member (starting, or taking a new lease): 500 ms doubling up to 8 s, times `spread` in
/// [0.5, 1.5), so thousands of agents refused by an overloaded cluster do not all come back
/// together and at once.
std::chrono::milliseconds etcd_retry_pause(int attempt, double spread);

}  // namespace ddprun::rdzv
