#include "ddprun/rdzv/spares.hpp"

#include "ddprun/rdzv/exclusion.hpp"

#include <algorithm>

namespace ddprun::rdzv {
namespace {

bool holds(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

std::string why_missing(const std::string& id, int round, const RoundHeader& h) {
  const auto excluded = std::find_if(h.excluded.begin(), h.excluded.end(),
                                     [&](const Exclusion& e) { return e.node == id; });
  if (excluded != h.excluded.end()) {
    if (excluded->failures == 0) {
      return "left out, unhealthy: " + excluded->reason;
    }
    return "left out after " + std::to_string(excluded->failures) +
           " failed rounds; last: " + excluded->reason;
  }
  if (h.ended.round == round - 1 && holds(h.ended.lost, id)) {
    return "lost";
  }
  if (h.ended.round == round - 1 && holds(h.ended.left, id)) {
    return "left";
  }
  return "not in round " + std::to_string(round);
}

}  // namespace

bool is_standing_by(const RoundHeader& h, const JoinView& v, const RdzvSettings& settings) {
  return !h.closed && h.phase == Phase::complete && v.waiting_round == h.round &&
         (h.members >= settings.max_nodes || h.standby > 0);
}

WallMs join_deadline_after(const RoundHeader& h, const JoinView& v, const RdzvSettings& settings) {
  if (!is_standing_by(h, v, settings)) {
    return v.join_deadline;
  }
  return std::max(v.join_deadline, v.now + settings.join_timeout.count());
}

bool is_place_free(const RoundHeader& h, const JoinView& v) {
  const bool members_gone =
      h.ended.round == h.round - 1 && (!h.ended.left.empty() || !h.ended.lost.empty());
  return members_gone || std::any_of(h.excluded.begin(), h.excluded.end(), [&](const Exclusion& e) {
           return e.round >= v.waiting_round;
         });
}

std::optional<WallMs> spare_entry(const RoundHeader& h, const JoinView& v,
                                  const RdzvSettings& settings) {
  if (!v.spare || h.phase != Phase::joining || h.round <= v.waiting_round || is_place_free(h, v)) {
    return std::nullopt;
  }
  const WallMs until = v.round_seen_at + settings.spare_grace.count();
  if (v.now >= until) {
    return std::nullopt;
  }
  return std::min(until, v.now + settings.poll_interval.count());
}

std::string render_standing_by(const RoundHeader& h, const RdzvSettings& settings) {
  if (h.segment > 0 && h.standby > 0) {
    return "rendezvous " + settings.run_id + " round " + std::to_string(h.round) +
           " is running with " + std::to_string(h.members) + " nodes in whole segments of " +
           std::to_string(h.segment) + " (--segment): this node stands by as one of " +
           std::to_string(h.waiting) +
           " spare(s) and takes a place where its domain can make a whole segment";
  }
  return "rendezvous " + settings.run_id + " round " + std::to_string(h.round) +
         " is running with " + std::to_string(h.members) +
         " nodes, as many as --nnodes allows: this node stands by as one of " +
         std::to_string(h.waiting) +
         " spare(s) and takes a place when a node fails, is left out or is lost";
}

SpareJoined spare_joined(const NodeDesc& self, int waited_round, int round,
                         const std::vector<NodeDesc>& before, const std::vector<NodeDesc>& after,
                         const RoundHeader& h) {
  SpareJoined out{self.id(), waited_round, round, {}};
  for (const auto& n : before) {
    const bool stays = std::any_of(after.begin(), after.end(),
                                   [&](const NodeDesc& a) { return a.id() == n.id(); });
    if (!stays) {
      out.replaced.push_back(Replaced{n.id(), why_missing(n.id(), round, h)});
    }
  }
  return out;
}

std::string render_spare_joined(const SpareJoined& s, const RdzvSettings& settings) {
  std::string out = "spare " + s.spare + " joins round " + std::to_string(s.round) +
                    " of rendezvous " + settings.run_id;
  if (s.replaced.empty()) {
    out += " (no member of round " + std::to_string(s.waited_round) + " is missing)";
  } else {
    out += " in place of ";
    for (std::size_t i = 0; i < s.replaced.size(); ++i) {
      out += (i == 0 ? "" : ", ") + s.replaced[i].node + " (" + s.replaced[i].why + ")";
    }
  }
  if (s.segment >= 0) {
    out += "; it fills segment " + std::to_string(s.segment) + " (domain " + s.domain + ")";
  }
  return out;
}

}  // namespace ddprun::rdzv
