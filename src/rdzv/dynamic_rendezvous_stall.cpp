// DynamicRendezvous and --stall-timeout auto: the round's maximum of what its members learned
// (stall_figures.hpp), raised by compare-and-set after a keep-alive and adopted by each member.

#include "ddprun/rdzv/dynamic_rendezvous.hpp"

namespace ddprun::rdzv {

// One read per keep-alive, one write only when this node knows more than the round does. A
// compare-and-set lost to another member is not retried now: the next keep-alive sees the
// winner's figures and raises them again if this node's are still larger.
asio::awaitable<void> DynamicRendezvous::share_stall_figures(StallFigures mine) {
  if (!last_round_) {
    co_return;  // not in a round yet: the figures wait for its members
  }
  const auto key = round_stall_key(settings_.run_id, last_round_->round);
  std::vector<std::string> keys{key};
  auto got = co_await kv_.multi_get_now(std::move(keys));
  if (!got || got->size() != 1) {
    co_return;  // the store is failing: the keep-alive's warning says so
  }
  const std::string seen = (*got)[0];
  const auto theirs = decode_stall_figures(seen);
  const auto merged = theirs ? merge(*theirs, mine) : mine;
  if (!theirs || merged != *theirs) {
    (void)co_await kv_.compare_set(key, seen, encode_stall_figures(merged));
  }
  if (stall_share_.adopt) {
    stall_share_.adopt(merged);
  }
}

}  // namespace ddprun::rdzv
