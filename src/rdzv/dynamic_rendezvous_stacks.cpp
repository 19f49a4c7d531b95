// DynamicRendezvous and the job-wide stacks request (stacks.hpp): asking, being asked
// (through watch(): dynamic_rendezvous_running.cpp calls stacks_signal with the request key it
// reads each poll), answering and collecting the answers.

#include "ddprun/rdzv/dynamic_rendezvous.hpp"
#include "ddprun/rdzv/members.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace ddprun::rdzv {
namespace {

/// compare-and-sets of the request a node tries before it gives up.
constexpr int k_request_attempts = 8;

std::optional<StacksRequest> standing_request(const std::string& text) {
  if (text.empty()) {
    return std::nullopt;
  }
  auto r = decode_stacks_request(text);
  return r ? std::optional<StacksRequest>(*r) : std::nullopt;
}

}  // namespace

void DynamicRendezvous::mark_stacks_seen(int round, const StacksRequest& r) {
  stacks_seen_ = std::max(stacks_seen(round), r.seq);
  stacks_round_ = round;
  stacks_request_ = r;
}

RunSignal DynamicRendezvous::stacks_signal(int round, const std::string& text) {
  const auto r = standing_request(text);
  if (!r || !should_answer(*r, self_.id(), stacks_seen(round))) {
    return RunSignal::none;
  }
  mark_stacks_seen(round, *r);
  spdlog::info("rendezvous {} round {}: {} asks for every node's worker stacks: {}",
               settings_.run_id, round, r->requester, r->reason);
  return RunSignal::stacks_requested;
}

asio::awaitable<Result<StacksRequest>> DynamicRendezvous::request_stacks(
    std::string reason, std::chrono::milliseconds collect_for) {
  auto keep = shared_from_this();
  if (!last_round_) {
    co_return make_error(ErrorCode::internal,
                         "rendezvous " + settings_.run_id + ": no round to ask for stacks in");
  }
  const int round = last_round_->round;
  const std::string key = stacks_request_key(settings_.run_id, round);
  auto text = co_await read_one(key);
  for (int lost = 1; text && lost <= k_request_attempts; ++lost) {
    const auto standing = standing_request(*text);
    if (is_collecting_elsewhere(standing, self_.id(), wall_now())) {
      mark_stacks_seen(round, *standing);
      co_return *standing;
    }
    const StacksRequest mine = next_stacks_request(standing, self_.id(), last_round_->group_rank(),
                                                   reason, wall_now(), collect_for);
    const std::string desired = encode_stacks_request(mine);
    text = co_await kv_.compare_set(key, *text, desired);
    if (text && *text == desired) {
      mark_stacks_seen(round, mine);
      co_return mine;
    }
    co_await sleep(contention_backoff(lost, settings_.poll_interval, random_.unit()));
    text = co_await read_one(key);
  }
  if (!text) {
    co_return text.error();
  }
  co_return make_error(ErrorCode::timeout, "rendezvous " + settings_.run_id + ": " + key +
                                               " kept changing under this node");
}

asio::awaitable<Result<void>> DynamicRendezvous::publish_stacks(std::string summary) {
  auto keep = shared_from_this();
  if (!last_round_ || !stacks_request_ || stacks_round_ != last_round_->round) {
    co_return make_error(ErrorCode::internal, "rendezvous " + settings_.run_id +
                                                  ": no stacks request of this round to answer");
  }
  const int round = last_round_->round;
  mark_stacks_seen(round, *stacks_request_);
  co_return co_await kv_.set(
      stacks_answer_key(settings_.run_id, round, stacks_request_->seq, last_round_->group_rank()),
      std::move(summary));
}

asio::awaitable<StacksGathered> DynamicRendezvous::collect_stacks(std::chrono::milliseconds bound) {
  auto keep = shared_from_this();
  StacksGathered out;
  if (!last_round_ || !stacks_request_ || stacks_round_ != last_round_->round) {
    out.error = "rendezvous " + settings_.run_id + ": no stacks request of this round to collect";
    co_return out;
  }
  const int round = last_round_->round;
  const StacksRequest request = *stacks_request_;
  std::vector<int> waiting = answering_ranks(last_round_->group_world_size(),
                                             last_round_->group_rank(), request.requester_rank);
  const WallMs deadline = wall_now() + bound.count();
  while (true) {
    co_await read_answers(round, request.seq, waiting, out);
    const WallMs left = deadline - wall_now();
    if (waiting.empty() || left <= 0) {
      break;
    }
    co_await sleep(std::min(settings_.poll_interval, std::chrono::milliseconds(left)));
  }
  std::sort(
      out.answers.begin(), out.answers.end(),
      [](const StacksAnswer& a, const StacksAnswer& b) { return a.group_rank < b.group_rank; });
  if (!waiting.empty()) {
    out.missing_names = unanswered_names(waiting, co_await round_members(round));
  }
  out.missing = std::move(waiting);
  co_return out;
}

asio::awaitable<void> DynamicRendezvous::read_answers(int round, int seq, std::vector<int>& waiting,
                                                      StacksGathered& out) {
  std::vector<std::string> keys;
  keys.reserve(waiting.size());
  for (int g : waiting) {
    keys.push_back(stacks_answer_key(settings_.run_id, round, seq, g));
  }
  auto got = co_await read_many(std::move(keys));
  if (!got) {
    out.error =
        "rendezvous " + settings_.run_id + ": reading the stacks answers: " + got.error().message;
    co_return;
  }
  out.error.clear();
  std::vector<int> still;
  for (std::size_t i = 0; i < waiting.size(); ++i) {
    if ((*got)[i].empty()) {
      still.push_back(waiting[i]);
    } else {
      out.answers.push_back(StacksAnswer{waiting[i], std::move((*got)[i])});
    }
  }
  waiting = std::move(still);
}

asio::awaitable<std::vector<NodeDesc>> DynamicRendezvous::round_members(int round) {
  if (last_round_ && last_round_->round == round && !last_round_->members.empty()) {
    co_return last_round_->members;
  }
  MembersReader reader(settings_.run_id, round);
  for (;;) {
    auto texts = co_await kv_.multi_get_now(reader.next_keys());
    auto whole = texts ? reader.take(*texts) : Result<bool>(texts.error());
    if (!whole) {
      co_return std::vector<NodeDesc>{};
    }
    if (*whole) {
      co_return reader.take_list();
    }
  }
}

void DynamicRendezvous::set_progress_source(std::function<std::optional<WallMs>()> source) {
  progress_source_ = std::move(source);
}

}  // namespace ddprun::rdzv
