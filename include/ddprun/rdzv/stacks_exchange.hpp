#pragma once
// StacksExchange: the job-wide stacks request (stacks.hpp) of one node over the rendezvous
// store: asking every other member of the round, being asked (watch() hands it the request
// key it reads each look), answering, and collecting the answers within a bound. The
// decisions are stacks.hpp's pure functions; this applies them.

#include "ddprun/net/asio.hpp"
#include "ddprun/rdzv/round_store.hpp"
#include "ddprun/rdzv/run_signal.hpp"
#include "ddprun/rdzv/settings.hpp"
#include "ddprun/rdzv/stacks.hpp"
#include "ddprun/util/random.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace ddprun::rdzv {

/// One member's answer to a stacks request.
struct StacksAnswer {
  int group_rank = 0;
  std::string summary;  ///< what it published (opaque here)
};

/// What collect() gathered within its bound.
struct StacksGathered {
  std::vector<StacksAnswer> answers;  ///< ascending group rank
  std::vector<int> missing;           ///< group ranks that did not answer, ascending
  /// unanswered_names(missing, the round's members): one per missing rank, its node's
  /// address when known ("gpu-03"), else "group rank 3".
  std::vector<std::string> missing_names;
  std::string error;  ///< why nothing could be asked or read (no request, the store's error)
};

class StacksExchange {
 public:
  /// `store`, `settings`, `round` (the round this node is in, as the executor keeps it) and
  /// `random` (its backoff) must outlive it and every coroutine it started.
  StacksExchange(RoundStore& store, const RdzvSettings& settings, std::string self_id,
                 const std::optional<RoundResult>& round, util::Random& random);

  /// Asks every other member of the current round for its workers' stacks; this node will
  /// collect answers for `collect_for` (pass collect()'s bound). When another member's
  /// request of the round is still being collected, that one stands and is returned instead:
  /// answer it (publish) rather than collect. Errors: no round yet, the store's error.
  asio::awaitable<Result<StacksRequest>> request(std::string reason,
                                                 std::chrono::milliseconds collect_for);
  /// The request this node last made, was asked by (signal() returned stacks_requested) or
  /// was handed by request().
  [[nodiscard]] const std::optional<StacksRequest>& last_request() const { return request_; }
  /// Files this node's answer to last_request() under the round's keys (by group rank).
  asio::awaitable<Result<void>> publish(std::string summary);
  /// The requester's side: reads every other member's answer to last_request(), looking
  /// every poll_interval (one MULTI_GET per 1024 unanswered members), until all arrived or
  /// `bound` passed.
  asio::awaitable<StacksGathered> collect(std::chrono::milliseconds bound);
  /// A running look at `text`, the round's request key: stacks_requested once per request
  /// that this node should answer, none otherwise.
  RunSignal signal(int round, const std::string& text);

 private:
  /// The seq of `round` this node was last told of, answered or made (0: none).
  [[nodiscard]] int seen(int round) const { return round_ == round ? seen_ : 0; }
  void mark_seen(int round, const StacksRequest& r);
  /// Whether last_request() belongs to the current round.
  [[nodiscard]] bool request_of_this_round() const;
  /// One look at the answers of `waiting` (group ranks): those that arrived move to `out`.
  asio::awaitable<void> read_answers(int round, int seq, std::vector<int>& waiting,
                                     StacksGathered& out);

  RoundStore& store_;
  const RdzvSettings& settings_;
  std::string self_id_;
  const std::optional<RoundResult>& round_now_;
  util::Random& random_;
  std::optional<StacksRequest> request_;
  int round_ = -1;  ///< the round of seen_
  int seen_ = 0;
};

}  // namespace ddprun::rdzv
