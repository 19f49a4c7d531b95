#pragma once
// One node's answer to a job-wide stack request (pure): the grouped stacks of its workers
// (errors::NodeStacks, stacks.hpp) as a compact text that travels through the rendezvous store.
// merge_stack_groups (declared in stacks.hpp) is implemented beside it, in node_stacks.cpp.
//
// The text, one record per line (values percent-escaped, so any byte is safe):
//   ddprun-stacks 1
//   node gpu-node-07
//   method py-spy
//   file /logs/run_ab12/attempt_0/stacks.txt
//   group 0,2-7 all_reduce (distributed_c10d.py:1536) <- train_step (train.py:55)
// Ranks are ranges, so a node's answer stays small however many ranks share a frame.

#include "ddprun/errors/stacks.hpp"
#include "ddprun/util/result.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::errors {

/// decode_node_stacks refuses texts naming more ranks than this (all groups together): a node
/// answers for its own workers only.
inline constexpr std::size_t k_max_decoded_ranks = std::size_t{1} << 16U;
/// ... and ranks above this.
inline constexpr int k_max_decoded_rank = (1 << 24) - 1;

/// The text above; decode_node_stacks(encode_node_stacks(s)) == s for any bytes in the fields
/// (groups' ranks ascending and distinct, as group_stacks makes them).
std::string encode_node_stacks(const NodeStacks& stacks);
/// Parses encode_node_stacks' text; anything else is an ErrorCode::protocol error whose
/// one-line message names the line. Unknown record names are skipped (later versions).
Result<NodeStacks> decode_node_stacks(std::string_view text);

}  // namespace ddprun::errors
