// End-to-end tests of elastic multi-node behaviour (spec torchrun.md §4.6, §5): an agent killed
// mid-run, a late joiner, a joiner beyond MAX, a worker failure restarting every node (static
// and c10d), a failure with no restarts left, an early finisher in the exit barrier.

#include <gtest/gtest.h>

#include <signal.h>

#include "multinode_agents.hpp"

using namespace ddprun::test;
using namespace ddprun::test::multinode;

namespace {

/// Node 0's and node 1's launch flags for one job (the store host first).
using JobFlags = std::vector<std::vector<std::string>>;

JobFlags c10d_pair(const std::string& nnodes = "2", int port = free_port()) {
  return {c10d_flags(nnodes, port, 1, loopback(0), k_fast_conf),
          c10d_flags(nnodes, port, 1, loopback(1), k_fast_conf)};
}

JobFlags static_pair() {
  const int port = free_port();
  return {static_flags(2, 0, port, 1, loopback(0)), static_flags(2, 1, port, 1, loopback(1))};
}

/// Node 1's first worker fails; with --max_restarts 1 both nodes restart and then succeed.
/// Returns each node's starts.
std::vector<std::vector<Start>> run_failure_restart(const JobFlags& job) {
  const std::vector<std::string> dirs{make_temp_dir("ddprun-mn-fail-"),
                                      make_temp_dir("ddprun-mn-fail-")};
  const std::string release = dirs[0] + "/release";
  const std::vector<std::string> restarts{"--max_restarts", "1"};
  Agents agents;
  EXPECT_TRUE(start_host(
      agents, concat(concat(concat(clean_ddprun(), restarts), job[0]), rounds(dirs[0], release))))
      << agents.all_logs();
  agents.start(concat(concat(concat(clean_ddprun(), restarts), job[1]),
                      rounds(dirs[1], release, "fail_first")));
  EXPECT_TRUE(eventually([&] { return starts(dirs[0]).size() == 2 && starts(dirs[1]).size() == 2; },
                         k_event_timeout))
      << agents.all_logs();
  release_and_expect_success(agents, release, 2);
  return {starts(dirs[0]), starts(dirs[1])};
}

}  // namespace

TEST(MultinodeElasticE2E, C10dSurvivorsReformAfterAgentKilled) {
  const int port = free_port();
  auto dir = make_temp_dir("ddprun-mn-kill-");
  const std::string release = dir + "/release";
  const std::string doomed_tag = unique_tag();
  Agents agents;
  std::vector<std::string> dirs;
  for (int k = 0; k < 3; ++k) {
    dirs.push_back(make_temp_dir("ddprun-mn-kill-"));
    auto argv = concat(concat(clean_ddprun(k == 2 ? doomed_tag : "X=1"),
                              c10d_flags("2:3", port, 1, loopback(k), k_fast_conf)),
                       rounds(dirs.back(), release));
    if (k == 0) {
      ASSERT_TRUE(start_host(agents, argv)) << agents.all_logs();
    } else {
      agents.start(argv);
    }
  }
  ASSERT_TRUE(eventually(
      [&] {
        return last_start_has(dirs[0], "world", "3") && last_start_has(dirs[1], "world", "3") &&
               last_start_has(dirs[2], "world", "3");
      },
      k_event_timeout))
      << agents.all_logs();
  agents.signal(2, SIGKILL);
  EXPECT_EQ(agents.wait(2), 128 + SIGKILL);
  EXPECT_TRUE(eventually([&] { return processes_with_env(doomed_tag).empty(); }, k_event_timeout))
      << "the killed agent's worker outlived it";
  ASSERT_TRUE(all_started_with_world({dirs[0], dirs[1]}, "2")) << agents.all_logs();
  release_and_expect_success(agents, release, 2);
  for (int k = 0; k < 2; ++k) {
    auto s = starts(dirs[static_cast<std::size_t>(k)]);
    EXPECT_EQ(s.back()["group_world"], "2");
    EXPECT_EQ(s.back()["master"].substr(0, 10), loopback(0) + ":");
    EXPECT_EQ(s.back()["restart"], "0") << "a lost node is not a failure restart";
  }
  // Under a heavy load a slow survivor can be reported lost too ("lost 127.0.0.3, 127.0.0.4")
  // and then rejoin; what must hold is that the killed node is named as lost.
  const auto& err = agents.err(0);
  EXPECT_TRUE(contains(err, "lost ") && contains(err.substr(err.find("lost ")), loopback(2)))
      << err;
}

TEST(MultinodeElasticE2E, C10dLateJoinerScalesUpWithoutCountingARestart) {
  const int port = free_port();
  const std::string a = make_temp_dir("ddprun-mn-late-");
  const std::string b = make_temp_dir("ddprun-mn-late-");
  const std::string release = a + "/release";
  Agents agents;
  ASSERT_TRUE(start_host(
      agents, concat(concat(clean_ddprun(), c10d_flags("1:2", port, 1, loopback(0), k_fast_conf)),
                     rounds(a, release))))
      << agents.all_logs();
  ASSERT_TRUE(eventually([&] { return last_start_has(a, "world", "1"); }, k_event_timeout))
      << agents.all_logs();
  agents.start(concat(concat(clean_ddprun(), c10d_flags("1:2", port, 1, loopback(1), k_fast_conf)),
                      rounds(b, release)));
  ASSERT_TRUE(
      eventually([&] { return last_start_has(a, "world", "2") && last_start_has(b, "world", "2"); },
                 k_event_timeout))
      << agents.all_logs();
  release_and_expect_success(agents, release, 2);
  auto sa = starts(a);
  ASSERT_EQ(sa.size(), 2U) << read_file(a + "/starts_0.log");
  EXPECT_EQ(sa[1]["restart"], "0") << "a scale-up is not a failure restart";
  EXPECT_EQ(sa[1]["rank"], "0");
  EXPECT_EQ(starts(b).back()["rank"], "1");
}

TEST(MultinodeElasticE2E, C10dWorkerFailureRestartsEveryNode) {
  auto s = run_failure_restart(c10d_pair());
  ASSERT_EQ(s[0].size(), 2U);
  ASSERT_EQ(s[1].size(), 2U);
  EXPECT_EQ(s[1][0]["restart"], "0");
  EXPECT_EQ(s[1][1]["restart"], "1");
  EXPECT_EQ(s[0][1]["world"], "2");
  EXPECT_EQ(s[1][1]["world"], "2");
  EXPECT_EQ(s[0][1]["master"], s[1][1]["master"]);
}

TEST(MultinodeElasticE2E, StaticWorkerFailureRestartsEveryNodeOnTheSameMaster) {
  auto s = run_failure_restart(static_pair());
  ASSERT_EQ(s[0].size(), 2U);
  ASSERT_EQ(s[1].size(), 2U);
  EXPECT_EQ(s[1][1]["restart"], "1");
  for (auto& node : s) {
    EXPECT_EQ(node[0]["master"], node[1]["master"]) << "static keeps --master_port";
    EXPECT_EQ(node[1]["group_world"], "2");
  }
}

// A deliberate difference from torchrun (docs/from-torchrun.md): a peer's failure counts against
// every node's --max_restarts, so all workers of a round share one TORCHELASTIC_RESTART_COUNT and
// thus one /worker/attempt_<n> store prefix. torchrun leaves the healthy node at 0 while the
// failing node goes to 1, and the two halves of the job then look for each other under
// different prefixes (pytorch issues #135712, #108158).
TEST(MultinodeElasticE2E, PeerFailureGivesEveryWorkerTheSameRestartCount) {
  auto s = run_failure_restart(c10d_pair());
  ASSERT_EQ(s[0].size(), 2U);
  ASSERT_EQ(s[1].size(), 2U);
  EXPECT_EQ(s[0][1]["restart"], "1");
  EXPECT_EQ(s[1][1]["restart"], "1");
}

TEST(MultinodeElasticE2E, C10dFailureWithoutRestartsEndsEveryNode) {
  auto job = c10d_pair();
  const std::vector<std::string> dirs{make_temp_dir("ddprun-mn-end-"),
                                      make_temp_dir("ddprun-mn-end-")};
  const std::string never = dirs[0] + "/never";  // the healthy worker is never released
  Agents agents;
  ASSERT_TRUE(start_host(agents, concat(concat(clean_ddprun(), job[0]), rounds(dirs[0], never))))
      << agents.all_logs();
  agents.start(concat(concat(clean_ddprun(), job[1]), rounds(dirs[1], never, "fail_first")));
  EXPECT_EQ(agents.wait(1, k_event_timeout), 1) << agents.all_logs();
  EXPECT_EQ(agents.wait(0, k_event_timeout), 1) << agents.all_logs();
  EXPECT_EQ(starts(dirs[0]).size(), 1U);
}

TEST(MultinodeElasticE2E, C10dEarlyFinisherWaitsInExitBarrierWithoutDisturbingPeers) {
  auto job = c10d_pair("1:2");
  const std::string dir = make_temp_dir("ddprun-mn-barrier-");
  // Node 1's worker outlives the keep-alive bound (2 s) several times over.
  const std::string slow = "echo start >> " + dir + "/slow.log; sleep 5";
  Agents agents;
  ASSERT_TRUE(
      start_host(agents, concat(concat(clean_ddprun(), job[0]), {"--no_python", "/bin/true"})))
      << agents.all_logs();
  agents.start(concat(concat(clean_ddprun(), job[1]), {"--no_python", "/bin/sh", "-c", slow}));
  EXPECT_EQ(agents.wait(1), 0) << agents.all_logs();
  EXPECT_EQ(agents.wait(0), 0) << agents.all_logs();
  EXPECT_EQ(read_file(dir + "/slow.log"), "start\n") << "the slow node restarted:\n"
                                                     << agents.all_logs();
}

// A joiner beyond MAX stands by as a spare (docs/reliability.md, Hot spares): the running round
// goes on undisturbed, and when the job ends the spare exits 0, not needed.
TEST(MultinodeElasticE2E, C10dJoinerBeyondMaxStandsByWithoutDisturbingAndExitsZeroAtTheEnd) {
  const int port = free_port();
  auto job = c10d_pair("1:2", port);
  const std::vector<std::string> dirs{make_temp_dir("ddprun-mn-full-"),
                                      make_temp_dir("ddprun-mn-full-"),
                                      make_temp_dir("ddprun-mn-full-")};
  const std::string release = dirs[0] + "/release";
  Agents agents;
  ASSERT_TRUE(start_host(agents, concat(concat(clean_ddprun(), job[0]), rounds(dirs[0], release))))
      << agents.all_logs();
  agents.start(concat(concat(clean_ddprun(), job[1]), rounds(dirs[1], release)));
  ASSERT_TRUE(all_started_with_world({dirs[0], dirs[1]}, "2")) << agents.all_logs();
  auto extra = agents.start(
      concat(concat(clean_ddprun(), c10d_flags("1:2", port, 1, loopback(2), k_fast_conf)),
             rounds(dirs[2], release)));
  // The extra agent must have reached the store and read the full round before the job ends,
  // or it would find no store at all rather than a closed rendezvous.
  ASSERT_TRUE(eventually([&] { return contains(agents.err(extra), "is running with 2 nodes"); },
                         k_event_timeout))
      << agents.all_logs();
  release_and_expect_success(agents, release, 2);
  EXPECT_EQ(agents.wait(extra), 0) << agents.all_logs();
  EXPECT_TRUE(contains(agents.err(extra), "stood by as a spare: the job did not need it"))
      << agents.err(extra);
  EXPECT_EQ(starts(dirs[0]).size(), 1U) << "a node beyond MAX must not restart the group";
  EXPECT_TRUE(starts(dirs[2]).empty());
}
