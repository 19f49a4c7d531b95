#pragma once
// The job-wide half of a hang report, as the agent sees the other nodes: ask them for their
// workers' stacks, answer their asking, collect their answers. A rendezvous with peers
// (ElasticRendezvous) implements it; a single node has no peers (NoPeers). The request itself
// arrives as the rendezvous' watch() signal `stacks_requested`.

#include "ddprun/errors/stacks.hpp"
#include "ddprun/net/asio.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace ddprun::agent {

/// The other nodes' answers to a job-wide stack request.
struct PeerStacks {
  std::vector<errors::NodeStacks> answers;
  std::vector<std::string> missing;  ///< the nodes that did not answer in time
};

class StackExchange {
 public:
  virtual ~StackExchange() = default;
  /// Asks every other node of the round to take its workers' stacks, for `reason`; true when
  /// other nodes were asked.
  virtual asio::awaitable<bool> request_stacks(std::string reason) = 0;
  /// After the rendezvous' watch() said stacks_requested: why the other node asked.
  virtual std::string stacks_request() const = 0;
  /// This node's answer to that request.
  virtual asio::awaitable<void> answer_stacks(errors::NodeStacks mine) = 0;
  /// The other nodes' answers to this node's request, waiting at most `bound` for them.
  virtual asio::awaitable<PeerStacks> collect_stacks(std::chrono::milliseconds bound) = 0;
};

/// A node alone: nobody to ask, nothing to answer.
class NoPeers final : public StackExchange {
 public:
  asio::awaitable<bool> request_stacks(std::string /*reason*/) override { co_return false; }
  std::string stacks_request() const override { return {}; }
  asio::awaitable<void> answer_stacks(errors::NodeStacks /*mine*/) override { co_return; }
  asio::awaitable<PeerStacks> collect_stacks(std::chrono::milliseconds /*bound*/) override {
    co_return PeerStacks{};
  }
};

}  // namespace ddprun::agent
