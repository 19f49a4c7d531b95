#include "ddprun/rdzv/rank_order.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <tuple>

namespace ddprun::rdzv {
namespace {

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

/// The node whose group rank 0 is kept: the endpoint host, else (not for the static backend,
/// whose ranks are --node-rank) the node that was rank 0 in the latest round a live node ran.
std::optional<std::size_t> anchor_of(const std::vector<Candidate>& live, bool by_index_only) {
  for (std::size_t i = 0; i < live.size(); ++i) {
    if (live[i].node.is_endpoint_host) {
      return i;
    }
  }
  std::optional<std::size_t> best;
  if (by_index_only) {
    return best;
  }
  for (std::size_t i = 0; i < live.size(); ++i) {
    const auto& n = live[i].node;
    if (n.last_rank == 0 && n.last_round >= 0 &&
        (!best || n.last_round > live[*best].node.last_round)) {
      best = i;
    }
  }
  return best;
}

int latest_round(const std::vector<Candidate>& live) {
  int latest = -1;
  for (const auto& c : live) {
    latest = std::max(latest, c.node.last_round);
  }
  return latest;
}

/// Infrastructure order (the file's comment), as indices into `live`.
std::vector<std::size_t> infra_order(const std::vector<Candidate>& live, bool by_index_only) {
  const auto anchor = anchor_of(live, by_index_only);
  const int latest = latest_round(live);
  auto before = [&](std::size_t ia, std::size_t ib) {
    const auto& a = live[ia].node;
    const auto& b = live[ib].node;
    const bool a_first = anchor == ia;
    const bool b_first = anchor == ib;
    if (a_first != b_first) {
      return a_first;
    }
    if (!by_index_only && a.topology != b.topology) {
      if (a.topology.empty() || b.topology.empty()) {
        return b.topology.empty();  // a known place first
      }
      return natural_less(a.topology, b.topology);
    }
    if (a.node_index != b.node_index) {
      if (!a.node_index || !b.node_index) {
        return a.node_index.has_value();  // a known index first
      }
      return *a.node_index < *b.node_index;
    }
    const bool a_latest = !by_index_only && latest >= 0 && a.last_round == latest;
    const bool b_latest = !by_index_only && latest >= 0 && b.last_round == latest;
    if (a_latest != b_latest) {
      return a_latest;
    }
    if (a_latest && a.last_rank != b.last_rank) {
      return a.last_rank < b.last_rank;
    }
    return live[ia].slot < live[ib].slot;
  };
  std::vector<std::size_t> order(live.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(), before);
  return order;
}

/// The domains in order of their first node; a node without a domain is one alone.
std::vector<std::vector<std::size_t>> group_domains(const std::vector<std::size_t>& order,
                                                    const std::vector<Candidate>& live) {
  std::vector<std::vector<std::size_t>> groups;
  std::map<std::string, std::size_t> where;
  for (auto i : order) {
    const auto& d = live[i].node.domain;
    if (d.empty()) {
      groups.push_back({i});
      continue;
    }
    auto [it, fresh] = where.emplace(d, groups.size());
    if (fresh) {
      groups.emplace_back();
    }
    groups[it->second].push_back(i);
  }
  return groups;
}

}  // namespace

bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      const std::size_t si = i;
      const std::size_t sj = j;
      while (i < a.size() && is_digit(a[i])) {
        ++i;
      }
      while (j < b.size() && is_digit(b[j])) {
        ++j;
      }
      auto digits = [](const std::string& s, std::size_t from, std::size_t to) {
        while (from + 1 < to && s[from] == '0') {
          ++from;  // leading zeros do not count
        }
        return s.substr(from, to - from);
      };
      const auto da = digits(a, si, i);
      const auto db = digits(b, sj, j);
      if (da.size() != db.size()) {
        return da.size() < db.size();
      }
      if (da != db) {
        return da < db;
      }
      continue;
    }
    if (a[i] != b[j]) {
      return a[i] < b[j];
    }
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

std::string domain_text(const NodeDesc& n) { return n.domain.empty() ? "-" : n.domain; }

Placement place_nodes(const std::vector<Candidate>& live, int max_nodes, int segment,
                      bool by_index_only) {
  Placement out;
  const auto order = infra_order(live, by_index_only);
  if (by_index_only) {
    out.members = order;
    return out;
  }
  int segments_left = segment > 0 ? max_nodes / segment : 0;
  for (const auto& group : group_domains(order, live)) {
    if (segment <= 0) {
      out.members.insert(out.members.end(), group.begin(), group.end());
      continue;
    }
    const int whole = std::min(static_cast<int>(group.size()) / segment, segments_left);
    segments_left -= whole;
    const auto placed = static_cast<std::ptrdiff_t>(whole) * segment;
    out.members.insert(out.members.end(), group.begin(), group.begin() + placed);
    out.standby.insert(out.standby.end(), group.begin() + placed, group.end());
  }
  return out;
}

}  // namespace ddprun::rdzv
