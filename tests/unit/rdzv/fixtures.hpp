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
  return s;  // torch defaults: last call 30 s, keep-alive 5 s x 3, rollback grace 5 s
}

/// An incomplete round with `nodes` as participants, all beating at `now`.
inline RdzvState joining(const std::vector<NodeDesc>& nodes, WallMs now) {
  RdzvState s;
  for (const auto& n : nodes) {
    s.participants[n.id()] = Participant{n, 0};
    s.last_heartbeats[n.id()] = now;
  }
  return s;
}

/// A complete round with ranks in the order given.
inline RdzvState running(const std::vector<NodeDesc>& nodes, WallMs now, int round = 0) {
  RdzvState s = joining(nodes, now);
  s.round = round;
  s.complete = true;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    s.participants[nodes[i].id()].rank = static_cast<int>(i);
  }
  return s;
}

}  // namespace ddprun::rdzv::test
