#pragma once
// The hot-spare scenarios (#27 §3), shared by the c10d and the etcd-v3 end-to-end tests:
// a fixed-size job (--nnodes 2:2) of agents 0 and 1, and agent 2 standing by as a spare.
//   - Agent 1's workers start failing: it is the root cause of two failed rounds in a row, and
//     with a spare waiting it is left out (exit 3) even though the job is fixed-size; the spare
//     takes its place and the job finishes on two nodes.
//   - Agent 1 is SIGKILLed: the spare takes its place in the next round.
//   - Nothing fails: the spare exits 0 when the job ends, saying it was not needed.
//   - The spare's --health-check starts failing while it waits: it withdraws with exit 3.
//   - Agent 1's agent is frozen (SIGSTOP) past the keep-alive bound: the spare takes its place,
//     the job finishes, agent 1's worker fails then; continued, agent 1 must end at once
//     (issue #43; what it can learn depends on the backend).
// Which node ends as a member can differ from run to run (a spare may take a slot before a
// slow incumbent is back), so the checks are about the job and its logs, not about who.

#include <gtest/gtest.h>

#include <csignal>
#include <functional>
#include <string>
#include <vector>

#include "multinode_agents.hpp"

namespace ddprun::test::multinode {

/// A job of --nnodes 2:2 (c10d_job or etcd_job).
using SpareJob = RdzvJob;

/// The three agents of a spare scenario and their directories.
struct SpareAgents {
  Agents agents;
  std::vector<std::string> dirs;
  std::string release;
  std::string fail_now;  ///< agent 1's workers fail once this exists (fail mode)

  std::string events(std::size_t i) const { return read_file(dirs[i] + "/events.jsonl"); }
};

inline std::vector<std::string> spare_argv(const SpareJob& job, SpareAgents& s, std::size_t i,
                                           bool failing) {
  auto w = rounds(s.dirs[i], s.release, failing ? "fail_when" : "");
  if (failing) {
    w.push_back(s.fail_now);
  }
  return concat(concat(concat(clean_ddprun(), {"--max_restarts", "3", "--events-file",
                                               s.dirs[i] + "/events.jsonl"}),
                       job.flags(i)),
                w);
}

/// Starts agents 0 and 1, waits until both run round 0, then starts agent 2 and waits until
/// `ddprun status` counts it as waiting. False (with the reason in a failed expectation) else.
inline bool start_with_spare(const SpareJob& job, SpareAgents& s, bool agent1_fails) {
  for (std::size_t i = 0; i < 3; ++i) {
    s.dirs.push_back(make_temp_dir("ddprun-spare-"));
  }
  s.release = s.dirs[0] + "/release";
  s.fail_now = s.dirs[0] + "/fail-now";
  if (job.agent0_hosts) {
    EXPECT_TRUE(start_host(s.agents, spare_argv(job, s, 0, false))) << s.agents.all_logs();
  } else {
    s.agents.start(spare_argv(job, s, 0, false));
  }
  s.agents.start(spare_argv(job, s, 1, agent1_fails));
  const bool running = eventually(
      [&] { return !starts(s.dirs[0]).empty() && !starts(s.dirs[1]).empty(); }, k_event_timeout);
  EXPECT_TRUE(running) << "agents 0 and 1 did not start round 0\n" << s.agents.all_logs();
  s.agents.start(spare_argv(job, s, 2, false));
  std::string status;
  const bool counted = eventually(
      [&] {
        status = run(concat({ddprun_bin()}, concat({"status"}, job.status_args))).out;
        return contains(status, "waiting (spares, late joiners): 1 nodes\n  " + loopback(2) + "_");
      },
      k_event_timeout);
  EXPECT_TRUE(counted) << "the spare is not listed as waiting:\n" << status << s.agents.all_logs();
  EXPECT_TRUE(starts(s.dirs[2]).empty()) << "a fixed-size job ran the third node";
  return running && counted;
}

/// Both good agents' logs and events, for checks that do not depend on which of them ended as
/// the spare that stepped in.
inline std::string good_logs(const SpareAgents& s) {
  return s.agents.err(0) + s.agents.err(2) + s.events(0) + s.events(2);
}

/// Whether agent 2, the spare, runs in a round of two within k_event_timeout.
inline bool spare_runs(const SpareAgents& s) {
  return eventually([&] { return last_start_has(s.dirs[2], "group_world", "2"); }, k_event_timeout);
}

/// Releases the workers: agents 0 and 2 finish the job.
inline void expect_finished_by_0_and_2(SpareAgents& s) {
  touch(s.release);
  EXPECT_EQ(s.agents.wait(0), 0) << s.agents.all_logs();
  EXPECT_EQ(s.agents.wait(2), 0) << s.agents.all_logs();
}

inline void expect_spare_replaces_failing_node(const SpareJob& job) {
  SpareAgents s;
  ASSERT_TRUE(start_with_spare(job, s, true));
  touch(s.fail_now);
  EXPECT_EQ(s.agents.wait(1), 3) << s.agents.all_logs();
  const std::string bad_err = s.agents.err(1);
  EXPECT_TRUE(contains(bad_err, "is left out of rendezvous")) << bad_err;
  EXPECT_TRUE(contains(bad_err, "this agent exits with status 3")) << bad_err;
  ASSERT_TRUE(spare_runs(s)) << "the spare did not join\n" << s.agents.all_logs();
  const std::string bad_id = loopback(1) + "_";
  const std::string logs = good_logs(s);
  EXPECT_TRUE(contains(logs, "in place of " + bad_id)) << logs;
  EXPECT_TRUE(contains(logs, "(left out after 2 failed rounds; last: rank ")) << logs;
  EXPECT_TRUE(contains(logs, "\"event\":\"spare_joined\"")) << logs;
  expect_finished_by_0_and_2(s);
}

inline void expect_spare_replaces_killed_node(const SpareJob& job) {
  SpareAgents s;
  ASSERT_TRUE(start_with_spare(job, s, false));
  s.agents.signal(1, SIGKILL);
  EXPECT_EQ(s.agents.wait(1), 128 + SIGKILL);
  ASSERT_TRUE(spare_runs(s)) << "the spare did not take the killed node's place\n"
                             << s.agents.all_logs();
  const std::string logs = s.agents.err(2) + s.events(2);
  EXPECT_TRUE(contains(logs, "spare " + loopback(2) + "_")) << logs;
  EXPECT_TRUE(contains(logs, "in place of " + loopback(1) + "_")) << logs;
  EXPECT_TRUE(contains(logs, "(lost)")) << logs;
  expect_finished_by_0_and_2(s);
}

inline void expect_unneeded_spare_exits_zero(const SpareJob& job) {
  SpareAgents s;
  ASSERT_TRUE(start_with_spare(job, s, false));
  touch(s.release);
  EXPECT_EQ(s.agents.wait(0), 0) << s.agents.all_logs();
  EXPECT_EQ(s.agents.wait(1), 0) << s.agents.all_logs();
  EXPECT_EQ(s.agents.wait(2), 0) << s.agents.all_logs();
  EXPECT_TRUE(contains(s.agents.err(2), "stood by as a spare: the job did not need it"))
      << s.agents.err(2);
  EXPECT_TRUE(starts(s.dirs[2]).empty());
}

/// `job` with agent 2 checking its health every second: healthy while `sick` does not exist.
inline SpareJob with_spare_health_check(SpareJob job, const std::string& sick) {
  auto base = job.flags;
  job.flags = [base, sick](std::size_t i) {
    auto f = base(i);
    if (i == 2) {
      f = concat(f, {"--health-check", "test ! -e " + sick, "--health-check-interval", "1"});
    }
    return f;
  };
  return job;
}

inline void expect_unhealthy_spare_withdraws(const SpareJob& job, const std::string& sick) {
  SpareAgents s;
  ASSERT_TRUE(start_with_spare(with_spare_health_check(job, sick), s, false));
  touch(sick);
  EXPECT_EQ(s.agents.wait(2), 3) << s.agents.all_logs();
  const std::string err = s.agents.err(2);
  EXPECT_TRUE(contains(err, "this node is unhealthy: health check failed")) << err;
  auto status = run(concat({ddprun_bin()}, concat({"status"}, job.status_args)));
  EXPECT_TRUE(contains(status.out, "excluded: " + loopback(2) + "_")) << status.out;
  EXPECT_TRUE(contains(status.out, "waiting (spares, late joiners): 0 nodes")) << status.out;
  touch(s.release);
  EXPECT_EQ(s.agents.wait(0), 0) << s.agents.all_logs();
  EXPECT_EQ(s.agents.wait(1), 0) << s.agents.all_logs();
  EXPECT_TRUE(starts(s.dirs[2]).empty());
}

/// Issue #43, up to the continue: agent 1's agent is frozen (SIGSTOP, as a paused VM or a long
/// partition) while its worker runs; the others drop it, the spare takes its place and the job
/// finishes with agents 0 and 2; agent 1's worker fails a second later (its peers are gone).
/// The caller continues agent 1 (SIGCONT) and checks how it ends.
inline void freeze_member_until_the_job_ends(const SpareJob& job, SpareAgents& s) {
  ASSERT_TRUE(start_with_spare(job, s, true));
  s.agents.signal(1, SIGSTOP);
  ASSERT_TRUE(spare_runs(s)) << "the spare did not take the frozen member's place\n"
                             << s.agents.all_logs();
  touch(s.fail_now);
  expect_finished_by_0_and_2(s);
}

/// Continues the frozen agent 1 and returns its exit status, waiting 20 s at most: within
/// seconds, not the join timeout (30 s), after which it would have given up on a new run.
inline int continue_frozen_member(SpareAgents& s) {
  s.agents.signal(1, SIGCONT);
  const int status = s.agents.wait(1, std::chrono::seconds(20));
  EXPECT_FALSE(contains(s.agents.err(1), "is incomplete"))
      << "it started a new run and waited for it\n"
      << s.agents.err(1);
  return status;
}

}  // namespace ddprun::test::multinode
