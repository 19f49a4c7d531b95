// The job-wide stacks request as data: its JSON and the decisions of stacks.hpp.

#include "ddprun/rdzv/stacks.hpp"

#include <nlohmann/json.hpp>

#include <set>

namespace ddprun::rdzv {
namespace {

using nlohmann::json;

}  // namespace

std::string encode_stacks_request(const StacksRequest& r) {
  json j = {{"seq", r.seq},    {"from", r.requester}, {"rank", r.requester_rank},
            {"why", r.reason}, {"at", r.at},          {"until", r.until}};
  return j.dump();
}

Result<StacksRequest> decode_stacks_request(std::string_view text) {
  try {
    const json j = json::parse(text);
    return StacksRequest{j.at("seq").get<int>(),   j.at("from").get<std::string>(),
                         j.at("rank").get<int>(),  j.at("why").get<std::string>(),
                         j.at("at").get<WallMs>(), j.at("until").get<WallMs>()};
  } catch (const std::exception& e) {
    return make_error(ErrorCode::protocol, "rendezvous stacks request of " +
                                               std::to_string(text.size()) +
                                               " bytes is not valid: " + e.what());
  }
}

bool is_collecting_elsewhere(const std::optional<StacksRequest>& standing,
                             const std::string& self_id, WallMs now) {
  return standing && standing->requester != self_id && now <= standing->until;
}

StacksRequest next_stacks_request(const std::optional<StacksRequest>& standing,
                                  const std::string& self_id, int self_rank, std::string reason,
                                  WallMs now, std::chrono::milliseconds bound) {
  return StacksRequest{standing ? standing->seq + 1 : 1,
                       self_id,
                       self_rank,
                       std::move(reason),
                       now,
                       now + bound.count()};
}

bool should_answer(const StacksRequest& request, const std::string& self_id, int seen_seq) {
  return request.requester != self_id && request.seq > seen_seq;
}

std::vector<int> answering_ranks(int group_world_size, int collector_rank, int requester_rank) {
  std::vector<int> out;
  for (int g = 0; g < group_world_size; ++g) {
    if (g != collector_rank && g != requester_rank) {
      out.push_back(g);
    }
  }
  return out;
}

std::vector<std::string> unanswered_names(const std::vector<int>& ranks,
                                          const std::vector<NodeDesc>& members) {
  std::set<std::string> addrs;
  for (const auto& n : members) {
    addrs.insert(n.addr);
  }
  const bool by_addr = addrs.size() == members.size();
  std::vector<std::string> out;
  out.reserve(ranks.size());
  for (int g : ranks) {
    if (g < 0 || static_cast<std::size_t>(g) >= members.size()) {
      out.push_back("group rank " + std::to_string(g));
      continue;
    }
    const auto& n = members[static_cast<std::size_t>(g)];
    out.push_back(by_addr ? n.addr : n.id());
  }
  return out;
}

}  // namespace ddprun::rdzv
