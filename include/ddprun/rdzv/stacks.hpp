#pragma once
// A job-wide request for the workers' stacks (pure): the record a node that saw a hang leaves
// under the round's keys (state.hpp: stacks_request_key), and the decisions around it. Every
// other member's watch() sees the request, captures its own workers and files a summary under
// stacks_answer_key(run, round, seq, its group rank); the requester collects them.
//
// One request stands per round at a time: a node that wants stacks while another node's
// request is still being collected answers that one instead, so a job-wide hang (every node
// stalls at once) gives one report, not one per node. A later request of the same round takes
// the next seq, so its answers never mix with an earlier one's.

#include "ddprun/rdzv/state.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::rdzv {

/// The round's standing request for stacks.
struct StacksRequest {
  int seq = 1;             ///< 1, 2, ... within a round; answers are filed under it
  std::string requester;   ///< NodeDesc::id() of the asking node
  int requester_rank = 0;  ///< its group rank (it files no answer)
  std::string reason;      ///< why it asks ("no worker output for 300s"), for the report
  WallMs at = 0;           ///< when it asked (its wall clock)
  WallMs until = 0;        ///< when it stops collecting answers
  bool operator==(const StacksRequest&) const = default;
};

/// Compact JSON.
std::string encode_stacks_request(const StacksRequest& r);
/// Parses encode_stacks_request's output; anything else is a protocol error (one line).
Result<StacksRequest> decode_stacks_request(std::string_view text);

/// Whether a node that wants stacks at `now` must answer `standing` (the round's request, if
/// any) instead of asking: another node asked and is still collecting.
bool is_collecting_elsewhere(const std::optional<StacksRequest>& standing,
                             const std::string& self_id, WallMs now);

/// The request a node makes over `standing` (the next seq of the round).
StacksRequest next_stacks_request(const std::optional<StacksRequest>& standing,
                                  const std::string& self_id, int self_rank, std::string reason,
                                  WallMs now, std::chrono::milliseconds bound);

/// Whether watch() of `self_id` must raise stacks_requested for `request`: another node asked
/// and this node was not yet told of request `request.seq` (`seen_seq`: the last seq of the
/// round it was told of or answered, 0 for none).
bool should_answer(const StacksRequest& request, const std::string& self_id, int seen_seq);

/// The group ranks whose answers the collector waits for: every member of a round of
/// `group_world_size` but `collector_rank` and `requester_rank`.
std::vector<int> answering_ranks(int group_world_size, int collector_rank, int requester_rank);

/// A name for each of `ranks` (group ranks): its node's address in `members` (the round's
/// members in group-rank order), or its full id when two members share an address, or
/// "group rank 3" when `members` does not hold it.
std::vector<std::string> unanswered_names(const std::vector<int>& ranks,
                                          const std::vector<NodeDesc>& members);

}  // namespace ddprun::rdzv
