#pragma once
// The crash-loop scenario (--crash-loop-limit, issue #27 §4), shared by the c10d and the etcd-v3
// end-to-end tests: two agents of a fixed-size job (--nnodes 2, so no node can be left out) with
// --max_restarts 10, one of whose workers fails the same way at once, attempt after attempt.
// With --crash-loop-limit 3, after three such attempts the job stops: both agents exit 3 (do not
// requeue), naming the repeated failure, instead of spending the other eight restarts; every
// attempt had one TORCHELASTIC_RESTART_COUNT on both nodes.

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "multinode_agents.hpp"

namespace ddprun::test::multinode {

struct CrashLoopJob {
  /// Agent i's rendezvous flags (--nnodes 2 and the backend's).
  std::function<std::vector<std::string>(std::size_t)> flags;
  /// Agent 0 hosts the rendezvous store (c10d): it must be listening before the other starts.
  bool agent0_hosts = false;
};

inline void expect_crash_loop_stops_the_job(const CrashLoopJob& job) {
  constexpr std::size_t k_agents = 2;
  constexpr std::size_t k_bad = 1;
  std::vector<std::string> dirs;
  for (std::size_t i = 0; i < k_agents; ++i) {
    dirs.push_back(make_temp_dir("ddprun-loop-"));
  }
  const std::string never = dirs[0] + "/never";  // the healthy worker waits to be stopped
  const auto argv = [&](std::size_t i) {
    return concat(concat(concat(clean_ddprun(), {"--max_restarts", "10", "--crash-loop-limit", "3",
                                                 "--events-file", dirs[i] + "/events.jsonl"}),
                         job.flags(i)),
                  rounds(dirs[i], never, i == k_bad ? "fail_always" : ""));
  };
  Agents agents;
  if (job.agent0_hosts) {
    ASSERT_TRUE(start_host(agents, argv(0))) << agents.all_logs();
  } else {
    agents.start(argv(0));
  }
  agents.start(argv(1));
  for (std::size_t i = 0; i < k_agents; ++i) {
    EXPECT_EQ(agents.wait(i), 3) << "agent " << i << "\n" << agents.all_logs();
  }
  const auto bad = starts(dirs[k_bad]);
  ASSERT_EQ(bad.size(), 3U) << "three attempts, not eleven\n" << agents.all_logs();
  const auto good = starts(dirs[0]);
  ASSERT_EQ(good.size(), 3U) << agents.all_logs();
  for (std::size_t a = 0; a < bad.size(); ++a) {
    EXPECT_EQ(bad[a].at("restart"), std::to_string(a)) << "the job's count on every node";
    EXPECT_EQ(good[a].at("restart"), std::to_string(a));
  }
  for (std::size_t i = 0; i < k_agents; ++i) {
    const std::string err = agents.err(i);
    EXPECT_TRUE(contains(err, "the last 3 attempts failed the same way within 300 s")) << err;
    EXPECT_TRUE(contains(err, ": exitcode 3): restarting would not help")) << err;
    EXPECT_TRUE(contains(err, "this agent exits with status 3 (do not requeue)")) << err;
    const std::string events = read_file(dirs[i] + "/events.jsonl");
    EXPECT_TRUE(contains(events, "\"event\":\"crash_loop\"")) << events;
    EXPECT_TRUE(contains(events, "\"state\":\"CRASH_LOOP\"")) << events;
  }
}

}  // namespace ddprun::test::multinode
