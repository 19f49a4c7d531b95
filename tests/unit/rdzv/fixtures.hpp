#pragma once
// Small builders shared by the rdzv unit tests.

#include "ddprun/rdzv/decide.hpp"

#include <string>
#include <vector>

namespace ddprun::rdzv::test {

inline NodeDesc node(const std::string& addr, std::int64_t pid = 100) {
  NodeDesc n;
  n.addr = addr;
  n.pid = pid;
  return n;
}

inline RdzvSettings settings(int min_nodes, int max_nodes) {
  RdzvSettings s;
  s.run_id = "job";
  s.min_nodes = min_nodes;
  s.max_nodes = max_nodes;
  return s;  // torch defaults: last call 30 s, keep-alive 5 s x 3; join_block 5 s, poll 150 ms
}

/// Round `round` taking slots; `deadline` when the last call runs.
inline RoundHeader joining(int round = 0, std::optional<WallMs> deadline = std::nullopt,
                           int checked = 0) {
  RoundHeader h;
  h.round = round;
  h.deadline = deadline;
  h.checked = checked;
  return h;
}

/// Round `round` being closed by `closer` since `since`, for slots 1..size.
inline RoundHeader closing(int round, int size, const std::string& closer, WallMs since) {
  RoundHeader h = joining(round);
  h.phase = Phase::closing;
  h.size = size;
  h.closer = closer;
  h.closing_since = since;
  return h;
}

/// Round `round` running with `members` nodes out of `size` slots.
inline RoundHeader complete(int round, int members, int size = -1) {
  RoundHeader h = joining(round);
  h.phase = Phase::complete;
  h.members = members;
  h.workers = members;
  h.size = size < 0 ? members : size;
  return h;
}

/// What the closer reads for a slot whose node beat at `beat`.
inline SlotRead read(const NodeDesc& n, WallMs beat) {
  return SlotRead{encode_node(n), std::to_string(beat)};
}

/// A withdrawn slot (its node is kept, marked).
inline SlotRead withdrawn() { return SlotRead{encode_withdrawn(node("10.9.9.9", 9)), ""}; }

/// A slot taken and not written (yet).
inline SlotRead missing() { return SlotRead{"", ""}; }

}  // namespace ddprun::rdzv::test
