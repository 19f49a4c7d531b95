// DynamicRendezvous: closing a round (the claimer's O(nodes) work), reading what this node got,
// and what a join that fails or waits tells the user.

#include "ddprun/rdzv/dynamic_rendezvous.hpp"
#include "ddprun/rdzv/members.hpp"
#include "ddprun/rdzv/rank_order.hpp"
#include "ddprun/util/batches.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <iterator>

namespace ddprun::rdzv {
namespace {

/// How long a closer waits, in all, for slots taken but not yet written.
constexpr std::chrono::milliseconds k_slot_write_grace{1000};

}  // namespace

asio::awaitable<Result<void>> DynamicRendezvous::close_round(const RoundHeader& h) {
  const int round = h.round;
  const std::string me = self_.id();
  auto size = co_await kv_.add(slots_key(settings_.run_id, round), 0);
  if (!size) {
    co_return size.error();
  }
  auto claimed = co_await update([&](const RoundHeader& c) {
    return with_claim(c, round, static_cast<int>(*size), me, wall_now());
  });
  if (!claimed) {
    co_return claimed.error();
  }
  if (claimed->round != round || claimed->phase != Phase::closing || claimed->closer != me) {
    co_return Result<void>{};  // another node closes it, or the round moved on
  }
  auto keys = slot_keys(settings_.run_id, round, claimed->size);
  auto nodes = co_await store_.read_many(keys);
  if (!nodes) {
    co_return nodes.error();
  }
  co_await store_.fill_missing(keys, *nodes, k_slot_write_grace);
  keys.clear();
  for (const auto& text : *nodes) {
    auto node = decode_node(text);  // "" and withdrawn slots: no heartbeat to look at
    keys.push_back(heartbeat_key(settings_.run_id, node ? node->id() : "-"));
  }
  auto beats = co_await store_.read_many(keys);
  if (!beats) {
    co_return beats.error();
  }
  std::vector<SlotRead> reads;
  for (std::size_t i = 0; i < nodes->size(); ++i) {
    reads.push_back(SlotRead{(*nodes)[i], (*beats)[i]});
  }
  const ClosePlan plan = plan_close(reads, *claimed, wall_now(), settings_);
  if (!plan.complete) {
    spdlog::info(
        "rendezvous {} round {}: only {} of the {} slots are live; the round keeps joining",
        settings_.run_id, round, plan.live, claimed->size);
    auto undone = co_await update([&](const RoundHeader& c) {
      return with_abort(c, round, me, plan, wall_now(), settings_);
    });
    co_return undone ? Result<void>{} : Result<void>(undone.error());
  }
  std::vector<std::pair<std::string, std::string>> pairs;
  for (std::size_t i = 0; i < plan.assignments.size(); ++i) {
    pairs.emplace_back(rank_key(settings_.run_id, round, static_cast<int>(i) + 1),
                       encode_assignment(plan.assignments[i]));
  }
  // The members list first, its last part in the request of the first assignments: a node
  // woken by its rank key reads the list at once (rounds of at most 32 nodes), and a round of
  // fewer than 3,000 nodes is still written in one request per 1024 keys.
  auto batches = util::batches(member_parts(settings_.run_id, round, plan.members),
                               k_member_parts_per_request);
  auto assignments = util::batches(std::move(pairs), k_keys_per_request);
  if (!assignments.empty()) {
    auto& first = assignments.front();
    std::move(first.begin(), first.end(), std::back_inserter(batches.back()));
    std::move(assignments.begin() + 1, assignments.end(), std::back_inserter(batches));
  }
  for (auto& batch : batches) {
    auto written = co_await kv_.multi_set(std::move(batch));
    if (!written) {
      co_return written.error();
    }
  }
  auto done =
      co_await update([&](const RoundHeader& c) { return with_complete(c, round, me, plan); });
  co_return done ? Result<void>{} : Result<void>(done.error());
}

// The rank key appears when the closer has planned the round; its value is trusted before the
// header says complete (the closer's last step), so thousands of woken nodes do not poll the
// header meanwhile. Should the closer die before that step, the round is started over and
// watch() ends the run that began.
asio::awaitable<Result<std::optional<RoundResult>>> DynamicRendezvous::await_assignment(
    const RoundHeader& h, WallMs until) {
  const auto wait = std::chrono::milliseconds(std::max<WallMs>(1, until - wall_now()));
  auto text = co_await kv_.get(rank_key(settings_.run_id, h.round, join_.slot), wait);
  if (!text && text.error().code == ErrorCode::timeout && h.phase != Phase::complete) {
    co_return std::optional<RoundResult>();  // look at the header again
  }
  if (!text) {
    co_return text.error();
  }
  auto a = decode_assignment(*text);
  if (!a) {
    co_return a.error();
  }
  if (!a->error.empty()) {
    co_return make_error(ErrorCode::config, a->error);
  }
  if (!a->member) {
    if (a->why == "standby") {
      spdlog::info(
          "rendezvous {} round {} closed without this node: its domain {} makes no whole "
          "segment of {} nodes (--segment); it stands by and takes a place where its domain can "
          "make one",
          settings_.run_id, h.round, domain_text(self_), settings_.segment);
    } else {
      spdlog::info("rendezvous {} round {} closed without this node ({}); it waits for the next",
                   settings_.run_id, h.round, a->why);
    }
    join_.forget_slot();
    co_return std::optional<RoundResult>();
  }
  // Only a failure of the round now running changes `failures`: what this node read while
  // the round formed is the count the round starts with.
  RoundResult r{h.round, *a, h.failures, {}};
  if (a->group_world_size <= static_cast<int>(k_max_named_ids)) {
    auto members = co_await store_.read_one(members_key(settings_.run_id, h.round, 0));
    if (members) {
      if (auto list = decode_members(*members); list) {
        r.members = std::move(*list);
      }
    }
  }
  co_return std::optional<RoundResult>(std::move(r));
}

asio::awaitable<Result<void>> DynamicRendezvous::withdraw() {
  if (join_.slot > 0 && join_.slot_round >= 0) {
    auto blanked = co_await kv_.set(slot_key(settings_.run_id, join_.slot_round, join_.slot),
                                    encode_withdrawn(self_));
    if (!blanked) {
      co_return blanked.error();
    }
    auto counted = co_await kv_.add(gone_key(settings_.run_id, join_.slot_round), 1);
    if (!counted) {
      co_return counted.error();
    }
    join_.forget_slot();
  }
  if (join_.waiting_round >= 0) {
    const int round = join_.waiting_round;
    const std::string me = self_.id();
    auto removed =
        co_await update([&](const RoundHeader& c) { return with_waiting(c, round, me, -1); });
    if (!removed) {
      co_return removed.error();
    }
    join_.waiting_round = -1;
  }
  co_return Result<void>{};
}

asio::awaitable<Error> DynamicRendezvous::run_gone() {
  std::optional<RunEnd> end;
  if (hooks_.run_end) {
    auto found = co_await hooks_.run_end();
    if (!found) {
      spdlog::warn("rendezvous {}: reading how the run ended: {}", settings_.run_id,
                   found.error().message);
    } else {
      end = *found;
    }
  }
  stop();
  co_return end ? render_run_end(*end, settings_, keep_alive_.dropped())
                : render_run_gone(settings_, keep_alive_.dropped());
}

asio::awaitable<Error> DynamicRendezvous::join_failed(const RoundHeader& h, JoinStep step) {
  if (step == JoinStep::error_closed) {
    const bool stood_by = join_.spare();  // withdraw() forgets it
    (void)co_await withdraw();
    if (!h.stop_reason.empty()) {
      co_return Error{ErrorCode::given_up,
                      "rendezvous " + settings_.run_id + " stopped: " + h.stop_reason};
    }
    if (stood_by) {
      co_return Error{ErrorCode::not_needed, "rendezvous " + settings_.run_id +
                                                 " ended while this node stood by as a spare"};
    }
    if (ever_joined_) {  // a member that comes back after the end (run_end.hpp)
      co_return render_run_end(*run_end_of(h), settings_, keep_alive_.dropped());
    }
    co_return Error{ErrorCode::closed, render_closed(settings_)};
  }
  // Every node that took a slot arrived, including one that timed out a moment before this
  // one and withdrew: only those that never came are "lost".
  auto seen = co_await store_.arrivals(h.round);
  auto named = seen.live_named;
  named.insert(named.end(), seen.withdrawn.begin(), seen.withdrawn.end());
  std::sort(named.begin(), named.end(), rank_before);
  if (auto undone = co_await withdraw(); !undone) {
    spdlog::warn("rendezvous {}: could not withdraw from round {}: {}", settings_.run_id, h.round,
                 undone.error().message);
  }
  std::vector<NodeDesc> previous;
  if (last_round_) {
    previous = last_round_->members;
  }
  co_return Error{ErrorCode::timeout, render_timeout(h, settings_, seen.taken, named, previous)};
}

}  // namespace ddprun::rdzv
