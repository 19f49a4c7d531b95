#pragma once
// When a LeaseKeeper renews its lease next, and when it gives the lease up: pure, from what
// its renewals did. A renewal etcd answered is followed by the next after about TTL/3; one
// that no member answered (timed out, refused as overloaded) is tried again soon, since the
// lease may run out before TTL/3 passes again; and the keeper gives up on its own clock only
// after two TTLs without an answer. A renewal that timed out may have reached etcd and
// renewed the lease, so one TTL without an answer does not mean etcd dropped it: until etcd
// answers, the keeper keeps asking (an answered renewal of a dropped lease says TTL 0, and the
// keeper reports the loss then).

#include <chrono>

namespace ddprun::etcd {

struct RenewalSchedule {
  std::chrono::milliseconds ttl;

  /// After an answered renewal: between TTL/3 and 5/4 of it (at least 200 ms) as `spread`
  /// (util::random_spread, [0.5, 1.5)) goes up, so agents granted at once do not renew at once;
  /// at the latest 7/12 of the TTL is left, room for a call that one member held for its whole
  /// timeout and the next one answered.
  std::chrono::milliseconds after_renewed(double spread) const;
  /// After the `failures`-th unanswered renewal in a row (1-based): 250 ms doubling, spread,
  /// at most the pause after an answered one.
  std::chrono::milliseconds after_failed(int failures, double spread) const;
  /// Whether `unanswered` (since the last answered renewal) is long enough to report the lease
  /// lost without etcd's word: two TTLs.
  bool gives_up(std::chrono::milliseconds unanswered) const;
};

}  // namespace ddprun::etcd
