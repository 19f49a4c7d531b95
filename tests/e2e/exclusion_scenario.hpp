#pragma once
// The node-exclusion scenario (--rdzv-conf max_node_failures, issue #18), shared by the c10d
// and the etcd-v3 end-to-end tests: three agents with --nnodes 2:3, one of which has workers
// that always fail. That node is the root cause of two failed rounds in a row (the default
// max_node_failures), so it withdraws with exit status 3 and the other two re-form without
// it, finish, and say in their logs and events which node was left out and why. Also the
// unhealthy-node scenario (a node whose --health-check fails is left out before it joins).

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "multinode_agents.hpp"

namespace ddprun::test::multinode {

/// k_fast_conf with a longer last call: every round before the exclusion completes at once when
/// the third agent is in, and a loaded machine that starts one agent late must not make round 0
/// a round of two (the failure of a round that a late joiner then ends is no failed round).
inline const std::string k_exclusion_conf =
    "join_timeout=30,last_call_timeout=5,keep_alive_interval=1,keep_alive_max_attempt=2";

struct ExclusionJob {
  /// Agent i's rendezvous flags (--nnodes 2:3 and the backend's).
  std::function<std::vector<std::string>(std::size_t)> flags;
  /// Agent 0 hosts the rendezvous store (c10d): it must be listening before the others start.
  bool agent0_hosts = false;
  /// `ddprun status` arguments for the job (after "status").
  std::vector<std::string> status_args;
};

inline void expect_failing_node_left_out(const ExclusionJob& job, std::size_t bad) {
  constexpr std::size_t k_agents = 3;
  std::vector<std::string> dirs;
  for (std::size_t i = 0; i < k_agents; ++i) {
    dirs.push_back(make_temp_dir("ddprun-excl-"));
  }
  const std::string release = dirs[0] + "/release";
  const auto good = [&](std::size_t i) { return i != bad; };
  const auto argv = [&](std::size_t i) {
    return concat(concat(concat(clean_ddprun(), {"--max_restarts", "3", "--events-file",
                                                 dirs[i] + "/events.jsonl"}),
                         job.flags(i)),
                  rounds(dirs[i], release, good(i) ? "" : "fail_always"));
  };
  Agents agents;
  for (std::size_t i = 0; i < k_agents; ++i) {
    if (i == 0 && job.agent0_hosts) {
      ASSERT_TRUE(start_host(agents, argv(0))) << agents.all_logs();
    } else {
      agents.start(argv(i));
    }
  }
  const std::size_t watcher = good(0) ? 0 : 1;
  ASSERT_TRUE(eventually(
      [&] {
        auto s = starts(dirs[watcher]);
        return !s.empty() && s.back()["group_world"] == "2";
      },
      k_event_timeout))
      << "the two good nodes did not re-form without agent " << bad << "\n"
      << agents.all_logs();
  const std::string bad_addr = loopback(static_cast<int>(bad));
  auto status = run(concat({ddprun_bin()}, concat({"status"}, job.status_args)));
  EXPECT_EQ(status.status, 0) << status.err;
  EXPECT_TRUE(contains(status.out, "excluded: " + bad_addr + "_")) << status.out;
  EXPECT_TRUE(contains(status.out, "after 2 failed rounds in a row")) << status.out;
  touch(release);
  for (std::size_t i = 0; i < k_agents; ++i) {
    if (good(i)) {
      EXPECT_EQ(agents.wait(i), 0) << agents.all_logs();
    }
  }
  EXPECT_EQ(agents.wait(bad), 3) << agents.all_logs();
  // At least two, not exactly: under ASan in CI the failing node once started 3 times with an
  // exclusion after 2 failures, so one of its failures was in a round that had already ended
  // (a slow agent's late arrival ends a running round) and was not a failed round.
  EXPECT_GE(starts(dirs[bad]).size(), 2U) << agents.all_logs();
  const std::string bad_err = agents.err(bad);
  EXPECT_TRUE(contains(bad_err, "is left out of rendezvous")) << bad_err;
  EXPECT_TRUE(contains(bad_err, "rank ")) << "names the failure: " << bad_err;
  EXPECT_TRUE(contains(bad_err, "this agent exits with status 3")) << bad_err;
  const std::string events = read_file(dirs[watcher] + "/events.jsonl");
  EXPECT_TRUE(contains(events, "\"event\":\"excluded\",\"node\":\"" + bad_addr + "_")) << events;
  EXPECT_TRUE(contains(events, "\"this_node\":false")) << events;
  const std::string bad_events = read_file(dirs[bad] + "/events.jsonl");
  // Its two failed rounds are 0 and 1, or 0 and 2 when it rejoined too late for round 1 (a
  // loaded machine) and came back through the wait list.
  EXPECT_TRUE(contains(bad_events, "\"this_node\":true,\"round\":")) << bad_events;
  EXPECT_TRUE(contains(bad_events, ",\"failures\":2,")) << bad_events;
  EXPECT_TRUE(contains(bad_events, "\"state\":\"EXCLUDED\"")) << bad_events;
}

/// Who of the unhealthy-node scenario's two agents starts first.
enum class Arrival {
  agent0_hosts,  ///< agent 0 hosts the rendezvous store (c10d): listening before agent 1 starts
  agent0_first,  ///< agent 0 is in the rendezvous before agent 1 starts
  /// Agent 1 is left out and gone before agent 0 starts (etcd-v3: the last one out of its
  /// generation keeps the record of why, and agent 0 still reads it).
  unhealthy_first,
};

/// The unhealthy-node scenario (--health-check, issue #27), on c10d and etcd-v3: two agents
/// with --nnodes 1:2 (`flags`); agent 1's check fails, so it never joins and exits 3 naming
/// the check's output, and agent 0 learns why from the header, re-forms alone and finishes.
inline void expect_unhealthy_node_left_out(
    const std::function<std::vector<std::string>(std::size_t)>& flags, Arrival arrival) {
  const std::vector<std::string> dirs{make_temp_dir("ddprun-hc-"), make_temp_dir("ddprun-hc-")};
  const std::string release = dirs[0] + "/release";
  const std::string check = "if [ -n \"$NODE_BAD\" ]; then echo 'node marked bad'; exit 1; fi";
  const auto argv = [&](std::size_t i, const std::string& tag) {
    return concat(concat(concat(clean_ddprun(tag), {"--health-check", check}), flags(i)),
                  rounds(dirs[i], release));
  };
  Agents agents;
  std::size_t good = 0;  // agents' indices: in order of start
  std::size_t bad = 1;
  if (arrival == Arrival::agent0_hosts) {
    ASSERT_TRUE(start_host(agents, argv(0, "X=1"))) << agents.all_logs();
  } else if (arrival == Arrival::agent0_first) {
    agents.start(argv(0, "X=1"));
    ASSERT_TRUE(eventually([&] { return contains(agents.err(0), " generation 1 under "); },
                           k_event_timeout))
        << agents.all_logs();
  } else {
    std::swap(good, bad);
    agents.start(argv(1, "NODE_BAD=1"));
    ASSERT_EQ(agents.wait(bad), 3) << agents.all_logs();
    agents.start(argv(0, "X=1"));
  }
  if (arrival != Arrival::unhealthy_first) {
    agents.start(argv(1, "NODE_BAD=1"));
  }
  EXPECT_EQ(agents.wait(bad), 3) << agents.all_logs();
  EXPECT_TRUE(contains(agents.err(bad), "health check failed: node marked bad (exit status 1)"))
      << agents.all_logs();
  EXPECT_TRUE(
      eventually([&] { return contains(agents.err(good), "it is unhealthy"); }, k_event_timeout))
      << "agent 0 never learnt why agent 1 left\n"
      << agents.all_logs();
  EXPECT_TRUE(
      eventually([&] { return last_start_has(dirs[0], "group_world", "1"); }, k_event_timeout))
      << agents.all_logs();
  touch(release);
  EXPECT_EQ(agents.wait(good), 0) << agents.all_logs();
  EXPECT_TRUE(starts(dirs[1]).empty()) << agents.all_logs();
}

}  // namespace ddprun::test::multinode
