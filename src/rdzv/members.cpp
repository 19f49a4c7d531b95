#include "ddprun/rdzv/members.hpp"

#include <algorithm>

namespace ddprun::rdzv {
namespace {

constexpr std::size_t k_max_parts = 1000;  // a million nodes

}  // namespace

std::string members_key(const std::string& run_id, int round, std::size_t part) {
  return round_prefix(run_id, round) + "members/" + std::to_string(part);
}

std::vector<std::pair<std::string, std::string>> member_parts(
    const std::string& run_id, int round, const std::vector<NodeDesc>& members) {
  // One part more than the full ones: the last holds fewer than k_members_per_part (perhaps
  // none), which is what ends the list for a reader.
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t part = 0; part <= members.size() / k_members_per_part; ++part) {
    const auto start = part * k_members_per_part;
    const auto end = std::min(members.size(), start + k_members_per_part);
    const std::vector<NodeDesc> nodes(members.begin() + static_cast<std::ptrdiff_t>(start),
                                      members.begin() + static_cast<std::ptrdiff_t>(end));
    out.emplace_back(members_key(run_id, round, part), encode_members(nodes));
  }
  return out;
}

MembersReader::MembersReader(std::string run_id, int round)
    : run_id_(std::move(run_id)), round_(round) {}

std::vector<std::string> MembersReader::next_keys() const {
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < k_member_parts_per_request; ++i) {
    keys.push_back(members_key(run_id_, round_, next_part_ + i));
  }
  return keys;
}

Result<bool> MembersReader::take(const std::vector<std::string>& texts) {
  for (const auto& text : texts) {
    if (text.empty()) {
      return true;  // not written: the list ended before it (or was never written)
    }
    auto nodes = decode_members(text);
    if (!nodes) {
      return make_error(nodes.error().code, nodes.error().message + " (part " +
                                                std::to_string(next_part_) + " of round " +
                                                std::to_string(round_) + ")");
    }
    ++next_part_;
    nodes_.insert(nodes_.end(), nodes->begin(), nodes->end());
    if (nodes->size() < k_members_per_part) {
      return true;
    }
  }
  if (next_part_ >= k_max_parts) {
    return make_error(ErrorCode::protocol, "round " + std::to_string(round_) +
                                               ": a members list of more than " +
                                               std::to_string(k_max_parts) + " parts");
  }
  return false;
}

}  // namespace ddprun::rdzv
