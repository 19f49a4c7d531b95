// DynamicRendezvous and hot spares (spares.hpp): a spare that becomes a member says whose
// place it took. Only spares read the two member lists, once per round they join.

#include "ddprun/rdzv/dynamic_rendezvous.hpp"
#include "ddprun/rdzv/rank_order.hpp"

#include <spdlog/spdlog.h>

namespace ddprun::rdzv {

asio::awaitable<void> DynamicRendezvous::note_spare(int waited_round, const RoundResult& joined) {
  auto before = co_await store_.round_members(waited_round, last_round_);
  std::vector<NodeDesc> after = joined.members;
  if (after.empty()) {  // not co_await in a ?: (g++ 12 miscompiles it)
    after = co_await store_.round_members(joined.round, joined);
  }
  auto h = co_await read_header();
  if (before.empty() || after.empty() || !h) {
    co_return;  // the lists cannot be had: nothing certain to say
  }
  auto joined_as = spare_joined(self_, waited_round, joined.round, before, after, h->value);
  if (settings_.segment > 0) {
    joined_as.segment = joined.group_rank() / settings_.segment;
    joined_as.domain = domain_text(self_);
  }
  if (joined_as.replaced.empty()) {
    co_return;  // a late joiner that filled room, not a replacement
  }
  spdlog::warn("{}", render_spare_joined(joined_as, settings_));
  if (hooks_.spare_joined) {
    hooks_.spare_joined(joined_as);
  }
}

}  // namespace ddprun::rdzv
