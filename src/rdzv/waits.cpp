#include "ddprun/rdzv/waits.hpp"

#include <algorithm>

namespace ddprun::rdzv {

std::chrono::milliseconds store_poll_interval(const RdzvSettings& s, int members) {
  const auto share =
      std::chrono::milliseconds(std::int64_t{members} * 1000 / k_store_looks_per_second);
  return std::max(s.watch_interval, share);
}

std::chrono::milliseconds watch_wait(const RdzvSettings& s, bool store_watches, bool first_look,
                                     bool failing, int members,
                                     std::optional<std::chrono::milliseconds> until_silent) {
  if (!store_watches) {
    return store_poll_interval(s, members);
  }
  if (first_look || failing) {
    return s.watch_interval;
  }
  if (until_silent) {
    const auto bound = std::max(s.watch_interval, keep_alive_bound(s));
    return std::clamp(*until_silent + std::chrono::milliseconds(1), s.watch_interval, bound);
  }
  return std::max(s.watch_interval, s.keep_alive_interval);
}

WallMs join_wait_until(WallMs until, const JoinView& v, const RdzvSettings& s, bool store_watches) {
  if (!store_watches) {
    return until;
  }
  const WallMs fallback = std::min(v.now + s.keep_alive_interval.count(), v.join_deadline + 1);
  return std::max(until, fallback);
}

std::chrono::milliseconds barrier_wait(const RdzvSettings& s, bool store_watches,
                                       std::chrono::milliseconds left) {
  if (!store_watches) {
    return s.poll_interval;
  }
  const auto fallback = std::max(s.poll_interval, s.keep_alive_interval);
  return std::clamp(left, std::chrono::milliseconds(1), fallback);
}

}  // namespace ddprun::rdzv
