// Many nodes running the pure join algorithm against one shared header and a map standing in
// for the slot, rank and heartbeat keys, in a seeded random order and on simulated time. Each
// store operation of the executor is one step, so the steps of different nodes interleave as
// they do over a real store: a slot taken but not yet written, a claim between another node's
// read and its write. No I/O, no clock.

#include "ddprun/rdzv/decide.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "unit/rdzv/fixtures.hpp"

namespace ddprun::rdzv {
namespace {

constexpr WallMs k_start = 5'000'000;
constexpr WallMs k_step_ms = 10;
constexpr int k_max_steps = 400'000;

/// The next store operation of a node.
enum class Stage { decide, write_slot, claim, plan, finish };

struct SimNode {
  NodeDesc node;
  bool withdraws = false;  ///< takes a slot, then takes it back (leave while joining)
  bool dies = false;       ///< stops after writing its slot: no more heartbeats
  Stage stage = Stage::decide;
  int slot = 0;
  int slot_round = -1;
  int waiting_round = -1;
  WallMs wake = 0;
  bool awaiting = false;  ///< blocked on its rank key until `wake`
  int size = 0;           ///< claim: slots read by ADD 0
  ClosePlan plan;
  std::optional<Assignment> got;
  int got_round = -1;
  std::string error;
  bool out = false;  ///< finished (member, withdrawn or dead)
};

class World {
 public:
  World(RdzvSettings settings, unsigned seed) : settings_(std::move(settings)), rng_(seed) {}

  void add(SimNode n) { nodes_.push_back(std::move(n)); }

  /// Steps random nodes until `done` holds; false when it never did.
  bool run(const std::function<bool(const World&)>& done, int max_steps = k_max_steps) {
    for (int step = 0; step < max_steps; ++step) {
      now_ += k_step_ms;
      auto& n = nodes_[rng_() % nodes_.size()];
      if (!n.out) {
        beat(n);
        act(n);
      }
      if (done(*this)) {
        return true;
      }
    }
    return false;
  }

  RoundHeader header() const { return header_; }
  const std::vector<SimNode>& nodes() const { return nodes_; }
  std::string key(const std::string& k) const {
    auto it = kv_.find(k);
    return it == kv_.end() ? "" : it->second;
  }

 private:
  using Change = std::function<std::optional<RoundHeader>(const RoundHeader&)>;

  /// update(): the change applied to the header as it is now, when it still applies.
  RoundHeader update(const Change& change) {
    if (auto next = change(header_)) {
      header_ = *next;
    }
    return header_;
  }

  void beat(const SimNode& n) {
    if (n.slot_round >= 0 || n.waiting_round >= 0) {
      kv_[heartbeat_key("job", n.node.id())] = std::to_string(now_);
    }
  }

  JoinView view(const SimNode& n) const {
    return JoinView{n.slot, n.slot_round, n.waiting_round, std::nullopt, now_, k_join_deadline()};
  }

  WallMs k_join_deadline() const { return k_start + settings_.join_timeout.count(); }

  void act(SimNode& n) {
    switch (n.stage) {
      case Stage::decide:
        return decide(n);
      case Stage::write_slot:
        return write_slot(n);
      case Stage::claim:
        return claim(n);
      case Stage::plan:
        return plan(n);
      case Stage::finish:
        update([&](const RoundHeader& c) {
          return with_complete(c, n.slot_round, n.node.id(), n.plan);
        });
        n.stage = Stage::decide;
        return;
    }
  }

  void write_slot(SimNode& n) {
    const auto key = slot_key("job", n.slot_round, n.slot);
    if (n.withdraws) {
      kv_[key] = encode_withdrawn(n.node);
      n.out = true;
      return;
    }
    kv_[key] = encode_node(n.node);
    kv_[heartbeat_key("job", n.node.id())] = std::to_string(now_);
    n.out = n.dies;
    n.stage = Stage::decide;
  }

  void claim(SimNode& n) {
    const RoundHeader h = update([&](const RoundHeader& c) {
      return with_claim(c, n.slot_round, n.size, n.node.id(), now_);
    });
    const bool mine =
        h.round == n.slot_round && h.phase == Phase::closing && h.closer == n.node.id();
    n.stage = mine ? Stage::plan : Stage::decide;
  }

  void plan(SimNode& n) {
    const int round = n.slot_round;
    std::vector<SlotRead> reads;
    for (int s = 1; s <= header_.size; ++s) {
      const auto node = decode_slot(key(slot_key("job", round, s)));
      reads.push_back(SlotRead{key(slot_key("job", round, s)),
                               node ? key(heartbeat_key("job", node->id())) : ""});
    }
    n.plan = plan_close(reads, header_, now_, settings_);
    if (!n.plan.complete) {
      update([&](const RoundHeader& c) {
        return with_abort(c, round, n.node.id(), n.plan, now_, settings_);
      });
      n.stage = Stage::decide;
      return;
    }
    for (std::size_t i = 0; i < n.plan.assignments.size(); ++i) {
      kv_[rank_key("job", round, static_cast<int>(i) + 1)] =
          encode_assignment(n.plan.assignments[i]);
    }
    n.stage = Stage::finish;
  }

  void read_assignment(SimNode& n, const std::string& text) {
    const auto a = decode_assignment(text);
    ASSERT_TRUE(a) << a.error().message;
    if (a->member) {
      n.got = *a;
      n.got_round = n.slot_round;
      n.out = true;
      return;
    }
    n.slot = 0;
    n.slot_round = -1;
    n.wake = now_;  // as the executor: it decides again at once (the wait list)
  }

  void decide(SimNode& n) {
    if (n.awaiting) {
      const auto text = n.slot_round == header_.round ? key(rank_key("job", n.slot_round, n.slot))
                                                      : std::string();
      if (!text.empty()) {
        n.awaiting = false;
        return read_assignment(n, text);
      }
    }
    if (now_ < n.wake) {
      return;
    }
    n.awaiting = false;
    const RoundHeader h = header_;
    const JoinDecision d = decide_join(h, view(n), settings_);
    switch (d.step) {
      case JoinStep::take_slot:
        n.slot = ++slots_[h.round];
        n.slot_round = h.round;
        n.stage = Stage::write_slot;
        return;
      case JoinStep::set_deadline:
        update([&](const RoundHeader& c) { return with_deadline(c, h.round, now_, settings_); });
        return;
      case JoinStep::claim:
        n.size = slots_[h.round];
        n.stage = Stage::claim;
        return;
      case JoinStep::await_assignment:
        n.awaiting = true;
        n.wake = d.until;
        return;
      case JoinStep::wait:
        n.wake = d.until;
        return;
      case JoinStep::join_wait_list: {
        const auto c =
            update([&](const RoundHeader& x) { return with_waiting(x, h.round, n.node.id(), 1); });
        if (c.round == h.round && c.phase != Phase::joining) {
          n.waiting_round = h.round;
        }
        return;
      }
      case JoinStep::end_previous:
        return;  // no node here ran a round before
      case JoinStep::abort_stale_close:
        update([&](const RoundHeader& c) {
          return with_next_round(c, h.round, Phase::closing, {}, {});
        });
        return;
      case JoinStep::error_closed:
      case JoinStep::error_timeout:
        n.error = to_string(d.step);
        n.out = true;
        return;
    }
  }

  RdzvSettings settings_;
  std::mt19937 rng_;
  WallMs now_ = k_start;
  RoundHeader header_;
  std::map<int, int> slots_;  ///< the ADD counters
  std::map<std::string, std::string> kv_;
  std::vector<SimNode> nodes_;
};

std::vector<SimNode> sim_nodes(int count) {
  std::vector<SimNode> out;
  for (int i = 0; i < count; ++i) {
    SimNode n;
    n.node = test::node("n" + std::to_string(i));
    out.push_back(std::move(n));
  }
  return out;
}

int members(const World& w) {
  return static_cast<int>(std::count_if(w.nodes().begin(), w.nodes().end(),
                                        [](const SimNode& n) { return n.got.has_value(); }));
}

/// Every member got a distinct rank in one round, and the watch ring visits each once.
void expect_one_round(const World& w, int expected_members) {
  std::set<int> ranks;
  std::map<std::string, std::string> next;
  for (const auto& n : w.nodes()) {
    EXPECT_EQ(n.error, "") << n.node.id();
    if (n.got) {
      EXPECT_EQ(n.got_round, w.header().round);
      EXPECT_EQ(n.got->group_world_size, expected_members);
      ranks.insert(n.got->group_rank);
      next[n.node.id()] = n.got->watch_id;
    }
  }
  EXPECT_EQ(static_cast<int>(ranks.size()), expected_members);
  EXPECT_EQ(w.header().phase, Phase::complete);
  EXPECT_EQ(w.header().members, expected_members);
  if (expected_members > 1) {
    std::set<std::string> seen;
    std::string at = next.begin()->first;
    for (int i = 0; i < expected_members; ++i) {
      seen.insert(at);
      at = next[at];
    }
    EXPECT_EQ(static_cast<int>(seen.size()), expected_members);
    EXPECT_EQ(at, next.begin()->first);
  }
}

std::string trace(const World& w) {
  std::string out = "header " + encode_header(w.header());
  for (const auto& n : w.nodes()) {
    out += "\n  " + n.node.id() + " slot " + std::to_string(n.slot) + "@" +
           std::to_string(n.slot_round) + (n.got ? " member" : "") +
           (n.error.empty() ? "" : " " + n.error);
  }
  return out;
}

TEST(RdzvSimulation, RacingNodesFormOneRoundAtMax) {
  for (unsigned seed = 1; seed <= 40; ++seed) {
    World w(test::settings(5, 5), seed);
    for (auto& n : sim_nodes(5)) {
      w.add(std::move(n));
    }
    ASSERT_TRUE(w.run([](const World& x) { return members(x) == 5; })) << "seed " << seed << "\n"
                                                                       << trace(w);
    expect_one_round(w, 5);
  }
}

TEST(RdzvSimulation, ElasticRoundClosesAfterTheLastCall) {
  auto settings = test::settings(2, 8);
  settings.last_call_timeout = std::chrono::seconds(1);
  for (unsigned seed = 1; seed <= 20; ++seed) {
    World w(settings, seed);
    for (auto& n : sim_nodes(3)) {
      w.add(std::move(n));
    }
    ASSERT_TRUE(w.run([](const World& x) { return members(x) == 3; })) << "seed " << seed << "\n"
                                                                       << trace(w);
    expect_one_round(w, 3);
  }
}

// Nodes beyond max are counted on the wait list of a full round as spares (torch leaves them
// uncounted), and the round keeps running: a spare ends no round (spares.hpp).
TEST(RdzvSimulation, NodesBeyondMaxStandByAsCountedSparesAndTheRoundRunsOn) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    World w(test::settings(4, 8), seed);
    for (auto& n : sim_nodes(12)) {
      w.add(std::move(n));
    }
    ASSERT_TRUE(w.run([](const World& x) { return members(x) == 8; })) << "seed " << seed << "\n"
                                                                       << trace(w);
    constexpr int k_ten_seconds = 1'000;
    EXPECT_TRUE(w.run([](const World& x) { return x.header().waiting == 4; }, k_ten_seconds))
        << "seed " << seed << "\n"
        << trace(w);
    EXPECT_FALSE(w.run([](const World& x) { return x.header().round > 0; }, k_ten_seconds));
    expect_one_round(w, 8);
    EXPECT_EQ(w.header().waiting_ids.size(), 4U);
  }
}

TEST(RdzvSimulation, AWithdrawnSlotIsNoMember) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    World w(test::settings(3, 3), seed);
    auto nodes = sim_nodes(4);
    nodes[1].withdraws = true;
    for (auto& n : nodes) {
      w.add(std::move(n));
    }
    ASSERT_TRUE(w.run([](const World& x) { return members(x) == 3; })) << "seed " << seed << "\n"
                                                                       << trace(w);
    expect_one_round(w, 3);
    EXPECT_FALSE(w.nodes()[1].got);
  }
}

TEST(RdzvSimulation, ASilentSlotIsLeftOutAfterTheLastCall) {
  for (unsigned seed = 1; seed <= 10; ++seed) {
    World w(test::settings(3, 5), seed);
    auto nodes = sim_nodes(4);
    nodes[2].dies = true;
    for (auto& n : nodes) {
      w.add(std::move(n));
    }
    ASSERT_TRUE(w.run([](const World& x) { return members(x) == 3; })) << "seed " << seed << "\n"
                                                                       << trace(w);
    expect_one_round(w, 3);
    EXPECT_FALSE(w.nodes()[2].got);
  }
}

/// Nodes n0.. with the domains given, one letter each.
std::vector<SimNode> nodes_in_domains(const std::string& domains) {
  auto out = sim_nodes(static_cast<int>(domains.size()));
  for (std::size_t i = 0; i < domains.size(); ++i) {
    out[i].node.domain = std::string(1, domains[i]);
  }
  return out;
}

/// Every run of `segment` consecutive group ranks is of one domain.
void expect_whole_segments(const World& w, int segment) {
  std::map<int, std::string> domain_at;
  for (const auto& n : w.nodes()) {
    if (n.got) {
      domain_at[n.got->group_rank] = n.node.domain;
    }
  }
  for (const auto& [rank, domain] : domain_at) {
    EXPECT_EQ(domain, domain_at[rank - rank % segment]) << "group rank " << rank;
  }
}

// Seven nodes of four domains race for a 4:4 round in segments of 2: the round closes on two
// whole segments, the three others stand by on the wait list, and nothing starts it over.
TEST(RdzvSimulation, SegmentsCloseOnWholeRunsOfOneDomainAndTheRestStandsBy) {
  auto settings = test::settings(4, 4);
  settings.segment = 2;
  for (unsigned seed = 1; seed <= 30; ++seed) {
    World w(settings, seed);
    for (auto& n : nodes_in_domains("ACBABCD")) {
      w.add(std::move(n));
    }
    ASSERT_TRUE(w.run([](const World& x) {
      return members(x) == 4 && x.header().phase == Phase::complete;
    })) << "seed "
        << seed << "\n"
        << trace(w);
    constexpr int k_ten_seconds = 1'000;
    EXPECT_TRUE(w.run([](const World& x) { return x.header().waiting == 3; }, k_ten_seconds))
        << "seed " << seed << "\n"
        << trace(w);
    EXPECT_FALSE(w.run([](const World& x) { return x.header().round > 0; }, k_ten_seconds));
    expect_one_round(w, 4);
    expect_whole_segments(w, 2);
    // Those in the close's slots are counted as left standing by; later ones only wait.
    EXPECT_GE(w.header().standby, 0);
    EXPECT_LE(w.header().standby, 3);
    EXPECT_EQ(w.header().segment, 2);
  }
}

// 2:6 in segments of 2, with only domain A able to make one: the round closes after the last
// call on A's two nodes, without claiming again and again while too few segments are in.
TEST(RdzvSimulation, AnElasticRoundWithSegmentsClosesOnWhatMakesWholeSegments) {
  auto settings = test::settings(2, 6);
  settings.segment = 2;
  settings.last_call_timeout = std::chrono::seconds(1);
  for (unsigned seed = 1; seed <= 20; ++seed) {
    World w(settings, seed);
    for (auto& n : nodes_in_domains("ABCAD")) {
      w.add(std::move(n));
    }
    // The closer may be a node left standing by: wait for its last step too.
    ASSERT_TRUE(w.run([](const World& x) {
      return members(x) == 2 && x.header().phase == Phase::complete;
    })) << "seed "
        << seed << "\n"
        << trace(w);
    expect_one_round(w, 2);
    EXPECT_EQ(w.nodes()[0].got.has_value(), true);
    EXPECT_EQ(w.nodes()[3].got.has_value(), true);
  }
}

}  // namespace
}  // namespace ddprun::rdzv
