// StacksExchange: the job-wide stacks request over the rendezvous store (stacks_exchange.hpp).

#include "ddprun/rdzv/stacks_exchange.hpp"

#include "ddprun/rdzv/decide.hpp"

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

StacksExchange::StacksExchange(RoundStore& store, const RdzvSettings& settings, std::string self_id,
                               const std::optional<RoundResult>& round, util::Random& random)
    : store_(store),
      settings_(settings),
      self_id_(std::move(self_id)),
      round_now_(round),
      random_(random) {}

void StacksExchange::mark_seen(int round, const StacksRequest& r) {
  seen_ = std::max(seen(round), r.seq);
  round_ = round;
  request_ = r;
}

bool StacksExchange::request_of_this_round() const {
  return round_now_ && request_ && round_ == round_now_->round;
}

RunSignal StacksExchange::signal(int round, const std::string& text) {
  const auto r = standing_request(text);
  if (!r || !should_answer(*r, self_id_, seen(round))) {
    return RunSignal::none;
  }
  mark_seen(round, *r);
  spdlog::info("rendezvous {} round {}: {} asks for every node's worker stacks: {}",
               settings_.run_id, round, r->requester, r->reason);
  return RunSignal::stacks_requested;
}

asio::awaitable<Result<StacksRequest>> StacksExchange::request(
    std::string reason, std::chrono::milliseconds collect_for) {
  if (!round_now_) {
    co_return make_error(ErrorCode::internal,
                         "rendezvous " + settings_.run_id + ": no round to ask for stacks in");
  }
  const RoundResult in = *round_now_;
  const std::string key = stacks_request_key(settings_.run_id, in.round);
  auto text = co_await store_.read_one(key);
  for (int lost = 1; text && lost <= k_request_attempts; ++lost) {
    const auto standing = standing_request(*text);
    if (is_collecting_elsewhere(standing, self_id_, store_.wall_now())) {
      mark_seen(in.round, *standing);
      co_return *standing;
    }
    const StacksRequest mine = next_stacks_request(standing, self_id_, in.group_rank(), reason,
                                                   store_.wall_now(), collect_for);
    const std::string desired = encode_stacks_request(mine);
    text = co_await store_.kv().compare_set(key, *text, desired);
    if (text && *text == desired) {
      mark_seen(in.round, mine);
      co_return mine;
    }
    co_await store_.sleep(contention_backoff(lost, settings_.poll_interval, random_.unit()));
    text = co_await store_.read_one(key);
  }
  if (!text) {
    co_return text.error();
  }
  co_return make_error(ErrorCode::timeout, "rendezvous " + settings_.run_id + ": " + key +
                                               " kept changing under this node");
}

asio::awaitable<Result<void>> StacksExchange::publish(std::string summary) {
  if (!request_of_this_round()) {
    co_return make_error(ErrorCode::internal, "rendezvous " + settings_.run_id +
                                                  ": no stacks request of this round to answer");
  }
  const RoundResult in = *round_now_;
  const StacksRequest answered = *request_;
  mark_seen(in.round, answered);
  co_return co_await store_.kv().set(
      stacks_answer_key(settings_.run_id, in.round, answered.seq, in.group_rank()),
      std::move(summary));
}

asio::awaitable<StacksGathered> StacksExchange::collect(std::chrono::milliseconds bound) {
  StacksGathered out;
  if (!request_of_this_round()) {
    out.error = "rendezvous " + settings_.run_id + ": no stacks request of this round to collect";
    co_return out;
  }
  const RoundResult in = *round_now_;
  const StacksRequest request = *request_;
  std::vector<int> waiting =
      answering_ranks(in.group_world_size(), in.group_rank(), request.requester_rank);
  const WallMs deadline = store_.wall_now() + bound.count();
  while (true) {
    co_await read_answers(in.round, request.seq, waiting, out);
    const WallMs left = deadline - store_.wall_now();
    if (waiting.empty() || left <= 0) {
      break;
    }
    co_await store_.sleep(std::min(settings_.poll_interval, std::chrono::milliseconds(left)));
  }
  std::sort(
      out.answers.begin(), out.answers.end(),
      [](const StacksAnswer& a, const StacksAnswer& b) { return a.group_rank < b.group_rank; });
  if (!waiting.empty()) {
    out.missing_names = unanswered_names(waiting, co_await store_.round_members(in.round, in));
  }
  out.missing = std::move(waiting);
  co_return out;
}

asio::awaitable<void> StacksExchange::read_answers(int round, int seq, std::vector<int>& waiting,
                                                   StacksGathered& out) {
  std::vector<std::string> keys;
  keys.reserve(waiting.size());
  for (int g : waiting) {
    keys.push_back(stacks_answer_key(settings_.run_id, round, seq, g));
  }
  auto got = co_await store_.read_many(std::move(keys));
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

}  // namespace ddprun::rdzv
