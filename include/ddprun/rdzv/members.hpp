#pragma once
// A complete round's members list, in parts of k_members_per_part nodes (pure): each part is
// one value far below the store's 8 MiB value limit and etcd's 1.5 MiB request limit, so a
// round has no size cap from the list (one value held about 60,000 nodes on the store and
// 11,000 on etcd). The list ends at the first part that holds fewer than k_members_per_part
// nodes, or none: a reader needs no count, and the parts of the small rounds (at most 1,000
// nodes) are one key, read in one request as before.
//
//   ddprun/rdzv/<id>/<r>/members/<part>   nodes part*1000 .. part*1000+999 in group-rank order

#include "ddprun/rdzv/state.hpp"
#include "ddprun/util/result.hpp"

#include <string>
#include <vector>

namespace ddprun::rdzv {

/// About 140 KB of JSON a part; 400 KB with the longest domain and topology path
/// (rank_order.hpp: 128 characters each).
inline constexpr std::size_t k_members_per_part = 1000;
/// Parts per request, read or written: about 420 KB, 1.2 MB at most.
inline constexpr std::size_t k_member_parts_per_request = 3;

std::string members_key(const std::string& run_id, int round, std::size_t part);
/// The (key, value) pairs of `members` in parts; one part (perhaps empty) at least.
std::vector<std::pair<std::string, std::string>> member_parts(const std::string& run_id, int round,
                                                              const std::vector<NodeDesc>& members);

/// Gathers a list read part by part: next_keys() names the next k_member_parts_per_request
/// parts, take() adds what they held (an empty value: a part not written).
class MembersReader {
 public:
  MembersReader(std::string run_id, int round);
  std::vector<std::string> next_keys() const;
  /// true once the list is whole; an error for a part that is not a members list, or past
  /// a million nodes (a store that never ends the list).
  Result<bool> take(const std::vector<std::string>& texts);
  /// The nodes taken so far (all of them once take() said true; none when no part was written).
  std::vector<NodeDesc> take_list() { return std::move(nodes_); }

 private:
  std::string run_id_;
  int round_;
  std::size_t next_part_ = 0;
  std::vector<NodeDesc> nodes_;
};

}  // namespace ddprun::rdzv
