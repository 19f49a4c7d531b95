#pragma once
// How long the executor waits for other nodes between two looks at the store (pure). A store
// that watches (etcd: Kv::watches_changes()) ends a wait at the first change of the keys it
// names, so there a look after a full wait is only the fallback in case a change was missed,
// and the cadence of what only time can tell (a silent member, the join deadline): the waits
// may last keep_alive_interval. A store that cannot watch (the c10d TCPStore) is polled at
// ddprun's cadence, exactly as before.

#include "ddprun/rdzv/decide.hpp"
#include "ddprun/rdzv/settings.hpp"

#include <chrono>
#include <optional>

namespace ddprun::rdzv {

/// How many looks per second all the running nodes of a round may make at one store host
/// together: one look is one MULTI_GET of three small keys. The store serves several times this
/// (docs/performance.md, rdzv_scale_bench), which leaves room for joins, heartbeats and the
/// host's own work; 16,384 nodes polling every watch_interval (65,000 a second) saturated it.
inline constexpr int k_store_looks_per_second = 8000;

/// How often a running node of a round of `members` nodes looks at a store that cannot watch:
/// every watch_interval, or less often once the round is so large that the looks would pass
/// k_store_looks_per_second (16,384 nodes: every 2 s).
std::chrono::milliseconds store_poll_interval(const RdzvSettings& s, int members);

/// The wait before watch()'s next look: store_poll_interval on a store that cannot watch;
/// on one that watches, watch_interval before the first look of a run (a change made before
/// the store's watch began may not wake it) and while the store fails (so store_lost is found
/// on time); else, when the last look read the watched member's heartbeat, until it turns
/// silent (`until_silent` + 1 ms: that look finds a lost member at the keep-alive bound
/// itself), at least watch_interval and at most the keep-alive bound; without one,
/// keep_alive_interval.
std::chrono::milliseconds watch_wait(const RdzvSettings& s, bool store_watches, bool first_look,
                                     bool failing, int members,
                                     std::optional<std::chrono::milliseconds> until_silent);

/// Until when a joining node waits when decide_join() said `wait` until `until` (a poll:
/// nothing but the header can change the decision before then): `until` itself on a store
/// that cannot watch; on one that can, up to keep_alive_interval from now, never past the join
/// deadline.
WallMs join_wait_until(WallMs until, const JoinView& v, const RdzvSettings& s, bool store_watches);

/// The wait between two looks at the exit barrier's count: poll_interval; on a store that
/// watches keep_alive_interval, though not past the barrier's end (`left`, at least 1 ms).
std::chrono::milliseconds barrier_wait(const RdzvSettings& s, bool store_watches,
                                       std::chrono::milliseconds left);

}  // namespace ddprun::rdzv
