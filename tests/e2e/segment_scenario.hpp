#pragma once
// Topology-aware node ranks (#42), end to end, shared by the c10d and the etcd-v3 tests: agents
// on loopback addresses, each told its domain through DDPRUN_NODE_DOMAIN, in a --nnodes 4:4
// --segment 2 job.
//   - Four agents of domains A B A B: the A nodes get two consecutive group ranks, so do the B
//     nodes.
//   - Five agents of domains A C B A B: the job runs on A and B; C makes no whole segment,
//     stands by and exits 0 when the job ends.
//   - A B A B running, then C and a second A standing by: an A member is killed, and only the
//     waiting A takes its place (the event names the segment it fills); C keeps standing by.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "multinode_agents.hpp"

namespace ddprun::test::multinode {

/// A job of --nnodes 4:4 (c10d_job or etcd_job).
using SegmentJob = RdzvJob;

class SegmentAgents {
 public:
  explicit SegmentAgents(const SegmentJob& job) : job_(job) {}

  /// Starts agent i (the next one) in `domain`.
  void start(const std::string& domain) {
    const std::size_t i = dirs_.size();
    dirs_.push_back(make_temp_dir("ddprun-segment-"));
    domains_.push_back(domain);
    if (release_.empty()) {
      release_ = dirs_[0] + "/release";
    }
    auto argv = concat(concat(concat(clean_ddprun("DDPRUN_NODE_DOMAIN=" + domain),
                                     {"--max_restarts", "3", "--segment", "2", "--events-file",
                                      dirs_[i] + "/events.jsonl"}),
                              job_.flags(i)),
                       rounds(dirs_[i], release_));
    if (i == 0 && job_.agent0_hosts) {
      EXPECT_TRUE(start_host(agents_, argv)) << agents_.all_logs();
      return;
    }
    agents_.start(argv);
  }

  /// Starts one agent per letter of `domains`, 300 ms apart, so they join in that order.
  void start_all(const std::string& domains) {
    for (char d : domains) {
      start(std::string(1, d));
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  }

  /// Whether agents `which` run a round of four nodes, within k_event_timeout.
  bool run_in_four(const std::vector<std::size_t>& which) {
    return eventually(
        [&] {
          return std::all_of(which.begin(), which.end(), [&](std::size_t i) {
            return last_start_has(dirs_[i], "group_world", "4");
          });
        },
        k_event_timeout);
  }

  /// The group ranks of the latest starts of the agents in `domain`.
  std::set<int> ranks_of(const std::string& domain) const {
    std::set<int> out;
    for (std::size_t i = 0; i < dirs_.size(); ++i) {
      auto s = starts(dirs_[i]);
      if (domains_[i] == domain && !s.empty()) {
        out.insert(std::stoi(s.back()["group_rank"]));
      }
    }
    return out;
  }

  std::string status(bool json = false) const {
    auto args = concat({ddprun_bin(), "status"}, job_.status_args);
    if (json) {
      args.push_back("--json");
    }
    return run(args).out;
  }

  /// Whether `ddprun status` counts `n` waiting nodes, within k_event_timeout.
  bool waiting(int n) const {
    return eventually(
        [&] {
          return contains(status(),
                          "waiting (spares, late joiners): " + std::to_string(n) + " nodes\n");
        },
        k_event_timeout);
  }

  std::string events(std::size_t i) const { return read_file(dirs_[i] + "/events.jsonl"); }
  bool never_ran(std::size_t i) const { return starts(dirs_[i]).empty(); }
  Agents& agents() { return agents_; }
  const std::string& release() const { return release_; }

 private:
  const SegmentJob& job_;
  Agents agents_;
  std::vector<std::string> dirs_;
  std::vector<std::string> domains_;
  std::string release_;
};

/// Two consecutive group ranks: {0, 1} or {2, 3}.
inline bool is_one_segment(const std::set<int>& ranks) {
  return ranks == std::set<int>{0, 1} || ranks == std::set<int>{2, 3};
}

inline void expect_domains_get_consecutive_ranks(const SegmentJob& job) {
  SegmentAgents s(job);
  s.start_all("ABAB");
  ASSERT_TRUE(s.run_in_four({0, 1, 2, 3})) << s.agents().all_logs();
  EXPECT_TRUE(is_one_segment(s.ranks_of("A"))) << s.agents().all_logs();
  EXPECT_TRUE(is_one_segment(s.ranks_of("B"))) << s.agents().all_logs();
  EXPECT_TRUE(contains(s.agents().err(1),
                       "node domain B (DDPRUN_NODE_DOMAIN); node ranks in "
                       "segments of 2"))
      << s.agents().err(1);
  const auto table = s.status();
  EXPECT_TRUE(contains(table, "DOMAIN") && contains(table, "SEGMENT")) << table;
  const auto json = s.status(true);
  EXPECT_TRUE(contains(json, R"("domain":"A")") && contains(json, R"("segment":1)")) << json;
  release_and_expect_success(s.agents(), s.release(), 4);
}

inline void expect_a_domain_without_a_whole_segment_stands_by(const SegmentJob& job) {
  SegmentAgents s(job);
  s.start_all("ACBAB");
  ASSERT_TRUE(s.run_in_four({0, 2, 3, 4})) << s.agents().all_logs();
  ASSERT_TRUE(s.waiting(1)) << s.status() << s.agents().all_logs();
  EXPECT_TRUE(s.never_ran(1));
  EXPECT_TRUE(is_one_segment(s.ranks_of("A")));
  EXPECT_TRUE(is_one_segment(s.ranks_of("B")));
  EXPECT_TRUE(contains(s.agents().err(1),
                       "closed without this node: its domain C makes no whole segment of 2 nodes "
                       "(--segment); it stands by"))
      << s.agents().err(1);
  touch(s.release());
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(s.agents().wait(i), 0) << "agent " << i << "\n" << s.agents().all_logs();
  }
  EXPECT_TRUE(contains(s.agents().err(1), "stood by as a spare: the job did not need it"))
      << s.agents().err(1);
}

inline void expect_a_lost_node_replaced_only_from_its_domain(const SegmentJob& job) {
  SegmentAgents s(job);
  s.start_all("ABAB");
  ASSERT_TRUE(s.run_in_four({0, 1, 2, 3})) << s.agents().all_logs();
  s.start("C");
  ASSERT_TRUE(s.waiting(1)) << s.status() << s.agents().all_logs();
  s.start("A");
  ASSERT_TRUE(s.waiting(2)) << s.status() << s.agents().all_logs();
  s.agents().signal(2, SIGKILL);  // an A member; agent 0 (A) may host the store
  EXPECT_EQ(s.agents().wait(2), 128 + SIGKILL);
  ASSERT_TRUE(s.run_in_four({0, 1, 3, 5})) << s.agents().all_logs();
  EXPECT_TRUE(s.never_ran(4)) << "domain C took domain A's place\n" << s.agents().all_logs();
  EXPECT_TRUE(is_one_segment(s.ranks_of("A")));
  const auto events = s.events(5);
  EXPECT_TRUE(contains(events, R"("event":"spare_joined")")) << events;
  EXPECT_TRUE(contains(events, R"("domain":"A")")) << events;
  EXPECT_TRUE(contains(s.agents().err(5), "; it fills segment ")) << s.agents().err(5);
  touch(s.release());
  for (std::size_t i : {0UL, 1UL, 3UL, 4UL, 5UL}) {
    EXPECT_EQ(s.agents().wait(i), 0) << "agent " << i << "\n" << s.agents().all_logs();
  }
}

}  // namespace ddprun::test::multinode
