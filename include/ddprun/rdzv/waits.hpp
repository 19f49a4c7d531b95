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

namespace ddprun::rdzv {

/// The wait before watch()'s next look: watch_interval on a store that cannot watch, before the
/// first look of a run (a change made before the store's watch began may not wake it) and while
/// the store fails (so store_lost is found on time); else keep_alive_interval, the cadence at
/// which a watched heartbeat that goes silent without vanishing is noticed.
std::chrono::milliseconds watch_wait(const RdzvSettings& s, bool store_watches, bool first_look,
                                     bool failing);

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
