// DynamicRendezvous: leaving out a node that keeps failing (exclusion.hpp). The node whose
// failure was the root cause of max_node_failures failed rounds in a row records its own
// exclusion and stops; every node learns of it from the header it reads anyway.

#include "ddprun/rdzv/dynamic_rendezvous.hpp"

#include <spdlog/spdlog.h>

namespace ddprun::rdzv {

asio::awaitable<Result<std::optional<Exclusion>>> DynamicRendezvous::exclude_if_failing() {
  auto keep = shared_from_this();
  if (!last_round_ || settings_.max_node_failures <= 0) {
    co_return std::optional<Exclusion>();
  }
  auto h = co_await read_header();
  if (!h) {
    co_return h.error();
  }
  auto e = decide_exclusion(h->value, self_.id(), last_round_->group_world_size(), settings_);
  if (!e) {
    co_return std::optional<Exclusion>();
  }
  auto done = co_await update([&](const RoundHeader& c) { return with_exclusion(c, *e); },
                              wall_now() + settings_.read_timeout.count());
  if (!done) {
    co_return make_error(done.error().code,
                         "rendezvous " + settings_.run_id +
                             ": could not record this node's exclusion: " + done.error().message);
  }
  stop();
  note_exclusions(*done);
  co_return e;
}

asio::awaitable<Result<void>> DynamicRendezvous::exclude_unhealthy(std::string reason) {
  auto keep = shared_from_this();
  auto done = co_await update(
      [&](const RoundHeader& c) {
        return with_exclusion(c, Exclusion{self_.id(), c.round, 0, reason});
      },
      wall_now() + settings_.read_timeout.count());
  stop();
  if (!done) {
    co_return make_error(done.error().code, "rendezvous " + settings_.run_id +
                                                ": could not record that this node is unhealthy: " +
                                                done.error().message);
  }
  note_exclusions(*done);
  co_return Result<void>{};
}

asio::awaitable<Result<bool>> DynamicRendezvous::run_closed() {
  auto keep = shared_from_this();
  auto h = co_await read_header();
  if (!h) {
    co_return h.error();
  }
  co_return h->value.closed;
}

void DynamicRendezvous::note_exclusions(const RoundHeader& h) {
  if (h.excluded.size() == exclusions_seen_.size()) {
    return;  // the list only grows, and its first k_max_named_ids entries stay
  }
  for (const auto& e : new_exclusions(h, exclusions_seen_)) {
    if (e.node != self_.id()) {
      spdlog::warn("{}; the other nodes go on without it", render_exclusion(e, settings_));
    }
    if (hooks_.excluded) {
      hooks_.excluded(e);
    }
  }
  exclusions_seen_ = h.excluded;
}

}  // namespace ddprun::rdzv
