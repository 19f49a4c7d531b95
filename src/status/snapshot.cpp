// read_snapshot: the header, then the round's nodes, then three keys per node, each step one
// Reader::multi_get.

#include "ddprun/status/snapshot.hpp"

#include "ddprun/rdzv/members.hpp"
#include "ddprun/rdzv/stall_figures.hpp"
#include "ddprun/util/strings.hpp"

#include <algorithm>

namespace ddprun::status {
namespace {

Result<std::string> read_one(Reader& reader, std::string key) {
  auto values = reader.multi_get({std::move(key)});
  if (!values) {
    return values.error();
  }
  return values->empty() ? std::string() : std::move(values->front());
}

/// The nodes holding a slot of a round that is not complete yet (withdrawn ones left out), in
/// rank_before order.
Result<std::vector<rdzv::NodeDesc>> read_slots(Reader& reader, const std::string& id, int round) {
  auto slots = reader.counter(rdzv::slots_key(id, round));
  if (!slots) {
    return slots.error();
  }
  if (*slots < 1) {
    return std::vector<rdzv::NodeDesc>{};
  }
  auto texts = reader.multi_get(rdzv::slot_keys(id, round, static_cast<int>(*slots)));
  if (!texts) {
    return texts.error();
  }
  std::vector<rdzv::NodeDesc> nodes;
  for (const auto& t : *texts) {
    if (auto n = rdzv::decode_slot(t); n && !rdzv::is_withdrawn(t)) {
      nodes.push_back(std::move(*n));
    }
  }
  std::sort(nodes.begin(), nodes.end(), rdzv::rank_before);
  return nodes;
}

/// The round's nodes: the members of a complete round, else whoever holds a slot.
Result<std::vector<rdzv::NodeDesc>> read_nodes(Reader& reader, const std::string& id,
                                               const rdzv::RoundHeader& h) {
  if (h.phase != rdzv::Phase::complete) {
    return read_slots(reader, id, h.round);
  }
  rdzv::MembersReader members(id, h.round);
  for (;;) {
    auto texts = reader.multi_get(members.next_keys());
    if (!texts) {
      return texts.error();
    }
    auto whole = members.take(*texts);
    if (!whole) {
      return whole.error();
    }
    if (*whole) {
      return members.take_list();
    }
  }
}

/// Each node's heartbeat, last progress and learned stall timeout, in one pass over 3 keys per
/// node.
Result<void> read_times(Reader& reader, const std::string& id, Snapshot& snap) {
  constexpr std::size_t k_per_node = 3;
  std::vector<std::string> keys;
  keys.reserve(k_per_node * snap.nodes.size());
  for (const auto& n : snap.nodes) {
    keys.push_back(rdzv::heartbeat_key(id, n.id()));
    keys.push_back(rdzv::progress_key(id, n.id()));
    keys.push_back(rdzv::node_stall_key(id, n.id()));
  }
  auto texts = reader.multi_get(std::move(keys));
  if (!texts) {
    return texts.error();
  }
  for (std::size_t i = 0; i < snap.nodes.size() && k_per_node * i + 2 < texts->size(); ++i) {
    const std::string node = snap.nodes[i].id();
    const std::size_t at = k_per_node * i;
    if (auto ms = rdzv::parse_heartbeat((*texts)[at])) {
      snap.heartbeats[node] = *ms;
    }
    if (auto ms = rdzv::parse_progress_value((*texts)[at + 1])) {
      snap.progress[node] = *ms;
    }
    if (auto stall = rdzv::decode_node_stall((*texts)[at + 2])) {
      snap.stall_timeouts[node] = stall->timeout;
    }
  }
  return {};
}

}  // namespace

Result<std::int64_t> Reader::counter(const std::string& key) {
  auto text = read_one(*this, key);
  if (!text) {
    return text.error();
  }
  auto n = util::parse_int(*text);
  return n ? *n : std::int64_t{0};
}

Result<std::optional<Snapshot>> read_snapshot(Reader& reader, const std::string& run_id) {
  auto text = read_one(reader, rdzv::state_key(run_id));
  if (!text) {
    return text.error();
  }
  if (text->empty()) {
    return std::optional<Snapshot>();
  }
  auto header = rdzv::decode_header(*text);
  if (!header) {
    return header.error();
  }
  Snapshot snap;
  snap.header = std::move(*header);
  auto nodes = read_nodes(reader, run_id, snap.header);
  if (!nodes) {
    return nodes.error();
  }
  snap.nodes = std::move(*nodes);
  if (auto times = read_times(reader, run_id, snap); !times) {
    return times.error();
  }
  return std::optional<Snapshot>(std::move(snap));
}

}  // namespace ddprun::status
