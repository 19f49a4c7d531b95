#pragma once
// The stacks of one round, at most once per round: this node's, taken through a StackCapture,
// and, when this node asks, every other node's through the StackExchange, printed as one
// report for the job. The supervisor decides when (a stall, an expired timer, a failure with
// --stacks-on-failure, a peer's request) and which workers are targets; this unit does the
// asking, the taking, the merging and the printing.
//
// take(): asks the other nodes first, takes this node's stacks meanwhile, publishes its own
// answer (a node that detected the same hang at the same moment reads it from there), then
// collects the others' answers for a bounded time, naming the nodes that did not answer.
// answer(): another node asked; this node's stacks (taken now, or those of this round's own
// report) go back to it, and the report is that node's to print.

#include "ddprun/agent/seams.hpp"
#include "ddprun/agent/stack_exchange.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ddprun::agent {

class JobStacks {
 public:
  using Listener = std::function<void(const StackReport&)>;
  JobStacks(StackExchange& peers, Listener on_taken)
      : peers_(&peers), on_taken_(std::move(on_taken)) {}

  /// Where this node's stacks are taken; without one, none are (answers are then empty).
  void set_capture(StackCapture& capture) { capture_ = &capture; }
  void set_peers(StackExchange& peers) { peers_ = &peers; }
  /// A new round: its stacks are not taken yet.
  void new_round() { mine_.reset(); }
  /// This round's stacks can still be taken (a capture is set and they were not yet).
  bool can_take() const { return capture_ != nullptr && !mine_; }
  /// This node's report for `reason` (`stall`: the group stalled), with the other nodes'
  /// stacks merged in; printed, then given to the listener. Nothing when !can_take().
  asio::awaitable<void> take(std::vector<StackTarget> targets, std::string reason, bool stall);
  /// Another node asked (StackExchange::stacks_request says why): `targets` are this node's
  /// running workers, used only when can_take(). `role` prefixes the log line.
  asio::awaitable<void> answer(std::vector<StackTarget> targets, const std::string& role);

 private:
  StackExchange* peers_;
  Listener on_taken_;
  StackCapture* capture_ = nullptr;
  std::optional<errors::NodeStacks> mine_;  ///< taken in the current round (once)
};

}  // namespace ddprun::agent
