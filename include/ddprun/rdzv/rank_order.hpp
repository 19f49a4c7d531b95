#pragma once
// Group ranks from the topology, as a pure function: which live nodes of a closing round are
// members, in which order, and which stand by.
//
// Infrastructure order: the anchor first (the node hosting the rendezvous endpoint's store,
// else the node that was group rank 0 most recently: a surviving rank 0 keeps rank 0), then
// nodes by the scheduler's topology path (natural order: "s2" before "s10"), then by scheduler
// node index (SLURM_PROCID/NODEID, the PBS node file's order), then the latest round's
// members in their old order, then join order (slot).
//
// Domains (NodeDesc::domain; a node without one is a domain of its own) stay together: they are
// ordered by their first node in infrastructure order, and nodes keep that order inside them.
// With a segment size N (--segment), each domain gives as many whole runs of N consecutive
// ranks as it can, until MAX nodes are placed; the rest stand by. Without one, every node is
// placed (the caller has already cut the round at MAX).

#include "ddprun/rdzv/state.hpp"

#include <string>
#include <vector>

namespace ddprun::rdzv {

/// A live node of a closing round: its slot (join order) and description.
struct Candidate {
  int slot = 0;
  NodeDesc node;
};

struct Placement {
  std::vector<std::size_t> members;  ///< indices into the candidates, in group-rank order
  std::vector<std::size_t> standby;  ///< indices of nodes in no whole segment
};

/// Orders `live` into group ranks. `segment` 0: no segments. `by_index_only` (the static
/// backend, whose node index is --node-rank): the endpoint host, then node index, then slot;
/// no domains or topology.
Placement place_nodes(const std::vector<Candidate>& live, int max_nodes, int segment,
                      bool by_index_only);

/// "s2" < "s10": digit runs compare as numbers, the rest byte by byte.
bool natural_less(const std::string& a, const std::string& b);

/// The domain as shown to users: the node's domain, or "-" for a node alone.
std::string domain_text(const NodeDesc& n);

}  // namespace ddprun::rdzv
