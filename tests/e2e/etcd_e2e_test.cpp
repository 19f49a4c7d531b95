// End-to-end tests of --rdzv-backend etcd-v3 (issue #18) against real etcd clusters on
// loopback (tests/support/etcd_cluster.hpp), agents on 127.0.0.2-4: a job on a 1-member
// cluster, the agent holding group rank 0 killed mid-run, an unreachable etcd at start, a job
// reusing the --rdzv-id of a crashed one, the etcd leader killed mid-run, and a node whose
// workers always fail left out of the job. Skipped with the
// reason when Debian's etcd-server/etcd-client are not installed.

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "crash_loop_scenario.hpp"
#include "exclusion_scenario.hpp"
#include "multinode_agents.hpp"
#include "support/etcd_cluster.hpp"

using namespace ddprun::test;
using namespace ddprun::test::multinode;

namespace {

/// Room for an etcd leader election (about a second on loopback, more under load) plus the
/// client's failover inside the keep-alive bound (6 s), which k_fast_conf's 2 s does not give.
const std::string k_leader_loss_conf =
    "join_timeout=30,last_call_timeout=1,keep_alive_interval=2,keep_alive_max_attempt=3";

/// Every key etcd holds (one per line), through etcdctl.
std::string etcd_keys(const EtcdCluster& cluster) {
  RunOptions o;
  o.env_add["ETCDCTL_API"] = "3";
  auto r = run({"/usr/bin/etcdctl", "--endpoints", cluster.endpoints(), "get", "--prefix", "",
                "--keys-only"},
               o);
  EXPECT_EQ(r.status, 0) << r.err;
  return r.out;
}

/// Every key etcd holds but the runs' end records, which outlive a run's keys on a lease of their
/// own (an hour by default, rdzv/run_end.hpp), one per line.
std::string run_keys(const EtcdCluster& cluster) {
  std::string out;
  std::istringstream in(etcd_keys(cluster));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && !contains(line, "/ended/g")) {
      out += line + "\n";
    }
  }
  return out;
}

class EtcdE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    DDPRUN_SKIP_WITHOUT_ETCD();
    ASSERT_EQ(cluster_.start(), "");
  }
  EtcdCluster cluster_;
};

class EtcdE2E3 : public ::testing::Test {
 protected:
  void SetUp() override {
    DDPRUN_SKIP_WITHOUT_ETCD();
    ASSERT_EQ(cluster_.start(), "");
  }
  EtcdCluster cluster_{EtcdClusterOptions{3, false}};
};

}  // namespace

TEST_F(EtcdE2E, TwoAgentsRunAJobAndLeaveNoKeysBehind) {
  std::vector<std::string> dirs{make_temp_dir("ddprun-etcd-"), make_temp_dir("ddprun-etcd-")};
  const std::string release = dirs[0] + "/release";
  Agents agents;
  for (int k = 0; k < 2; ++k) {
    agents.start(concat(concat(clean_ddprun(), etcd_flags("2", cluster_.endpoints(), "job1", k)),
                        rounds(dirs[static_cast<std::size_t>(k)], release)));
  }
  ASSERT_TRUE(all_started_with_world(dirs, "2")) << agents.all_logs();
  release_and_expect_success(agents, release, 2);
  auto s0 = starts(dirs[0]).back();
  auto s1 = starts(dirs[1]).back();
  EXPECT_NE(s0["rank"], s1["rank"]);
  EXPECT_EQ(s0["master"], s1["master"]) << "one workers' store for the round";
  const std::string host0 = s0["group_rank"] == "0" ? loopback(0) : loopback(1);
  EXPECT_EQ(s0["master"].substr(0, host0.size() + 1), host0 + ":")
      << "the workers' store is on the group rank 0 agent";
  EXPECT_TRUE(contains(agents.err(0) + agents.err(1), "removed generation 1")) << agents.all_logs();
  EXPECT_EQ(run_keys(cluster_), "") << "the run's keys were deleted";
}

TEST_F(EtcdE2E, GlooAllreduceAcrossTwoAgents) {
  if (!have_torch()) {
    GTEST_SKIP() << "torch is not installed for /usr/bin/python3";
  }
  Agents agents;
  for (int k = 0; k < 2; ++k) {
    agents.start(concat(concat(clean_ddprun(), etcd_flags("2", cluster_.endpoints(), "gloo", k)),
                        {"--python", "/usr/bin/python3", worker("gloo_allreduce.py")}));
  }
  ASSERT_EQ(agents.wait(0, std::chrono::seconds(120)), 0) << agents.all_logs();
  ASSERT_EQ(agents.wait(1, std::chrono::seconds(120)), 0) << agents.all_logs();
  const std::string out = agents.out(0) + agents.out(1);
  EXPECT_TRUE(contains(out, "rank=0 world=2 allreduce=3.0")) << out;
  EXPECT_TRUE(contains(out, "rank=1 world=2 allreduce=3.0")) << out;
}

TEST_F(EtcdE2E, SurvivorsReformAndFinishAfterTheRankZeroAgentIsKilled) {
  const std::string release = make_temp_dir("ddprun-etcd-kill-") + "/release";
  Agents agents;
  std::vector<std::string> dirs;
  std::vector<std::string> tags;
  for (int k = 0; k < 3; ++k) {
    dirs.push_back(make_temp_dir("ddprun-etcd-kill-"));
    tags.push_back(unique_tag());
    agents.start(concat(
        concat(clean_ddprun(tags.back()), etcd_flags("2:3", cluster_.endpoints(), "elastic", k)),
        rounds(dirs.back(), release)));
  }
  ASSERT_TRUE(eventually(
      [&] {
        return last_start_has(dirs[0], "world", "3") && last_start_has(dirs[1], "world", "3") &&
               last_start_has(dirs[2], "world", "3");
      },
      k_event_timeout))
      << agents.all_logs();
  std::size_t doomed = 0;
  for (std::size_t k = 0; k < 3; ++k) {
    if (starts(dirs[k]).back()["group_rank"] == "0") {
      doomed = k;
    }
  }
  const std::string old_master = starts(dirs[doomed]).back()["master"];
  agents.signal(doomed, SIGKILL);
  EXPECT_EQ(agents.wait(doomed), 128 + SIGKILL);
  EXPECT_TRUE(eventually([&] { return processes_with_env(tags[doomed]).empty(); }, k_event_timeout))
      << "the killed agent's worker outlived it";
  std::vector<std::size_t> survivors;
  for (std::size_t k = 0; k < 3; ++k) {
    if (k != doomed) {
      survivors.push_back(k);
    }
  }
  ASSERT_TRUE(eventually(
      [&] {
        return last_start_has(dirs[survivors[0]], "world", "2") &&
               last_start_has(dirs[survivors[1]], "world", "2");
      },
      k_event_timeout))
      << agents.all_logs();
  touch(release);
  for (auto k : survivors) {
    EXPECT_EQ(agents.wait(k), 0) << agents.all_logs();
    auto s = starts(dirs[k]).back();
    EXPECT_EQ(s["group_world"], "2");
    EXPECT_NE(s["master"], old_master) << "a new rank 0 hosts a fresh workers' store";
    EXPECT_EQ(s["restart"], "0") << "a lost node is not a failure restart";
  }
  EXPECT_EQ(run_keys(cluster_), "") << "the run's keys were deleted";
}

TEST(EtcdE2EUnreachable, OneClearErrorNamingTheMembersAfterTheJoinTimeout) {
  const std::string endpoints = "127.0.0.1:" + std::to_string(free_port()) +
                                ",http://127.0.0.1:" + std::to_string(free_port());
  const auto t0 = std::chrono::steady_clock::now();
  auto r =
      run(concat(clean_ddprun(), concat(etcd_flags("2", endpoints, "nowhere", 0, "join_timeout=3"),
                                        {"--no_python", "/bin/true"})));
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_GE(took, std::chrono::seconds(3));
  EXPECT_LT(took, std::chrono::seconds(60)) << "a hang: no timing is asserted beyond that";
  const auto error_at = r.err.find("error:");
  ASSERT_NE(error_at, std::string::npos) << r.err;
  const auto line = r.err.substr(error_at, r.err.find('\n', error_at) - error_at);
  EXPECT_TRUE(contains(line, "no etcd member of " + std::string("http://") + endpoints)) << line;
  EXPECT_TRUE(contains(line, "join timeout (3 s)")) << line;
  EXPECT_TRUE(contains(line, "Connection refused")) << line;
}

TEST_F(EtcdE2E, ASecondJobWithTheSameIdAfterACrashedOneStartsCleanly) {
  std::vector<std::string> dirs{make_temp_dir("ddprun-etcd-crash-"),
                                make_temp_dir("ddprun-etcd-crash-")};
  {
    Agents first;
    for (int k = 0; k < 2; ++k) {
      first.start(concat(concat(clean_ddprun(), etcd_flags("2", cluster_.endpoints(), "reused", k)),
                         rounds(dirs[static_cast<std::size_t>(k)], dirs[0] + "/never")));
    }
    ASSERT_TRUE(eventually(
        [&] {
          return last_start_has(dirs[0], "world", "2") && last_start_has(dirs[1], "world", "2");
        },
        k_event_timeout))
        << first.all_logs();
    for (std::size_t k = 0; k < 2; ++k) {
      first.signal(k, SIGKILL);
      EXPECT_EQ(first.wait(k), 128 + SIGKILL);
    }
  }
  ASSERT_TRUE(contains(etcd_keys(cluster_), "/ddprun/rdzv/reused/g1/"))
      << "the crashed job's keys stay in etcd";
  // At once: the crashed agents' leases are still alive, but nobody beats any more.
  std::vector<std::string> again{make_temp_dir("ddprun-etcd-crash-"),
                                 make_temp_dir("ddprun-etcd-crash-")};
  const std::string release = again[0] + "/release";
  touch(release);
  Agents second;
  for (int k = 0; k < 2; ++k) {
    second.start(concat(concat(clean_ddprun(), etcd_flags("2", cluster_.endpoints(), "reused", k)),
                        rounds(again[static_cast<std::size_t>(k)], release)));
  }
  EXPECT_EQ(second.wait(0), 0) << second.all_logs();
  EXPECT_EQ(second.wait(1), 0) << second.all_logs();
  for (const auto& dir : again) {
    auto s = starts(dir);
    ASSERT_EQ(s.size(), 1u) << second.all_logs();
    EXPECT_EQ(s.back()["world"], "2");
    EXPECT_EQ(s.back()["restart"], "0");
  }
  EXPECT_TRUE(contains(second.all_logs(), "started generation 2")) << second.all_logs();
  EXPECT_EQ(run_keys(cluster_), "") << "the crashed job's keys went with the new generation";
}

TEST_F(EtcdE2E3, TheJobCarriesOnWhenTheEtcdLeaderIsKilled) {
  std::vector<std::string> dirs{make_temp_dir("ddprun-etcd-leader-"),
                                make_temp_dir("ddprun-etcd-leader-")};
  const std::string release = dirs[0] + "/release";
  Agents agents;
  for (int k = 0; k < 2; ++k) {
    agents.start(concat(
        concat(clean_ddprun(), etcd_flags("2", cluster_.endpoints(), "ha", k, k_leader_loss_conf)),
        rounds(dirs[static_cast<std::size_t>(k)], release)));
  }
  ASSERT_TRUE(all_started_with_world(dirs, "2")) << agents.all_logs();
  RunOptions o;
  o.env_add["ETCDCTL_API"] = "3";
  auto status =
      run({"/usr/bin/etcdctl", "--endpoints", cluster_.endpoints(), "endpoint", "status"}, o);
  ASSERT_EQ(status.status, 0) << status.err;
  std::size_t leader = 3;
  for (std::size_t m = 0; m < 3; ++m) {
    const auto at = status.out.find(cluster_.endpoint(m) + ",");
    const auto eol = status.out.find('\n', at);
    if (at != std::string::npos && contains(status.out.substr(at, eol - at), ", true,")) {
      leader = m;
    }
  }
  ASSERT_LT(leader, 3u) << "no leader in:\n" << status.out;
  cluster_.kill_member(leader);
  // Several keep-alive bounds pass: a stalled rendezvous would have ended the round by now.
  EXPECT_FALSE(eventually([&] { return starts(dirs[0]).size() > 1 || starts(dirs[1]).size() > 1; },
                          std::chrono::seconds(6)))
      << "the workers were restarted:\n"
      << agents.all_logs();
  release_and_expect_success(agents, release, 2);
  EXPECT_EQ(starts(dirs[0]).size(), 1u);
  EXPECT_EQ(starts(dirs[1]).size(), 1u);
}

TEST(EtcdE2ETls, ClientCertificatesWorkAndAWrongCaIsAClearError) {
  DDPRUN_SKIP_WITHOUT_ETCD();
  EtcdCluster cluster(EtcdClusterOptions{1, true});
  ASSERT_EQ(cluster.start(), "");
  const std::string tls = "cacert=" + cluster.ca_file() + ",cert=" + cluster.client_cert() +
                          ",key=" + cluster.client_key();
  // Members written without a scheme: protocol=https makes them TLS.
  std::string bare = cluster.endpoints();
  bare.erase(0, std::string("https://").size());
  Agents agents;
  for (int k = 0; k < 2; ++k) {
    agents.start(concat(concat(clean_ddprun(), etcd_flags("2", bare, "tls", k,
                                                          k_fast_conf + ",protocol=https," + tls)),
                        {"--no_python", "/bin/true"}));
  }
  EXPECT_EQ(agents.wait(0), 0) << agents.all_logs();
  EXPECT_EQ(agents.wait(1), 0) << agents.all_logs();
  const std::string wrong_ca = "join_timeout=2,cacert=" + cluster.other_ca_file() +
                               ",cert=" + cluster.client_cert() + ",key=" + cluster.client_key();
  auto r =
      run(concat(clean_ddprun(), concat(etcd_flags("2", cluster.endpoints(), "tls2", 0, wrong_ca),
                                        {"--no_python", "/bin/true"})));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "no etcd member of " + cluster.endpoints())) << r.err;
  EXPECT_TRUE(contains(r.err, "certificate verify failed")) << r.err;
}

namespace {

std::string token_file(const std::string& dir, const std::string& name, const std::string& secret) {
  std::string path = dir + "/" + name;
  std::ofstream(path) << secret << "\n";
  EXPECT_EQ(chmod(path.c_str(), 0600), 0);
  return path;
}

}  // namespace

TEST_F(EtcdE2E, TheRendezvousTokenAuthenticatesTheAgentsOverEtcd) {
  const auto dir = make_temp_dir("ddprun-etcd-token-");
  const auto good = token_file(dir, "good", "s3cret-one");
  const auto other = token_file(dir, "other", "s3cret-two");
  Agents agents;
  for (int k = 0; k < 2; ++k) {
    agents.start(concat(concat(clean_ddprun(), etcd_flags("2", cluster_.endpoints(), "tok", k,
                                                          k_fast_conf + ",token_file=" + good)),
                        {"--no_python", "/bin/true"}));
  }
  EXPECT_EQ(agents.wait(0), 0) << agents.all_logs();
  EXPECT_EQ(agents.wait(1), 0) << agents.all_logs();
  // Agents with different secrets cannot form one job: whichever reads the other's entries
  // first says why and fails; the other one then times out alone.
  const std::string short_conf = "join_timeout=5,last_call_timeout=1,keep_alive_interval=1";
  Agents mixed;
  for (int k = 0; k < 2; ++k) {
    mixed.start(concat(
        concat(clean_ddprun(), etcd_flags("2", cluster_.endpoints(), "tok2", k,
                                          short_conf + ",token_file=" + (k == 0 ? good : other))),
        {"--no_python", "/bin/true"}));
  }
  EXPECT_NE(mixed.wait(0), 0) << mixed.all_logs();
  EXPECT_NE(mixed.wait(1), 0) << mixed.all_logs();
  EXPECT_TRUE(contains(mixed.all_logs(), "is not signed with this job's token"))
      << mixed.all_logs();
}

// Issue #43: a finished job leaves the record of how it ended on a lease of end_record_ttl
// (here 2 s); it goes with the lease, and a new job reusing the id starts normally after it
// (as while it is there: AJobWhoseAgentWasKilledWhileFinishingLeavesTheIdUsable).
TEST_F(EtcdE2E, AnEndRecordExpiresAndTheIdStartsANewJob) {
  const std::string conf = k_fast_conf + ",end_record_ttl=2";
  const auto job = [&](const std::string& tag) {
    std::vector<std::string> dirs{make_temp_dir("ddprun-etcd-rec-"),
                                  make_temp_dir("ddprun-etcd-rec-")};
    const std::string release = dirs[0] + "/release";
    Agents agents;
    for (int k = 0; k < 2; ++k) {
      agents.start(
          concat(concat(clean_ddprun(), etcd_flags("2", cluster_.endpoints(), "rec", k, conf)),
                 rounds(dirs[static_cast<std::size_t>(k)], release)));
    }
    EXPECT_TRUE(eventually(
        [&] {
          return last_start_has(dirs[0], "world", "2") && last_start_has(dirs[1], "world", "2");
        },
        k_event_timeout))
        << tag << "\n"
        << agents.all_logs();
    touch(release);
    EXPECT_EQ(agents.wait(0), 0) << tag << "\n" << agents.all_logs();
    EXPECT_EQ(agents.wait(1), 0) << tag << "\n" << agents.all_logs();
  };
  job("first");
  EXPECT_TRUE(contains(etcd_keys(cluster_), "/ddprun/rdzv/rec/ended/g1")) << etcd_keys(cluster_);
  EXPECT_TRUE(eventually([&] { return !contains(etcd_keys(cluster_), "/ended/"); },
                         std::chrono::seconds(20)))
      << "the record outlived its lease: " << etcd_keys(cluster_);
  job("second");
  EXPECT_EQ(run_keys(cluster_), "");
}

TEST_F(EtcdE2E, ANodeWhoseWorkersAlwaysFailIsLeftOut) {
  const std::string endpoints = cluster_.endpoints();
  expect_failing_node_left_out(
      ExclusionJob{
          [&](std::size_t i) {
            return etcd_flags("2:3", endpoints, "excl", static_cast<int>(i), k_exclusion_conf);
          },
          false,
          {"--rdzv_backend", "etcd-v3", "--rdzv_endpoint", endpoints, "--rdzv_id", "excl"}},
      0);
}

TEST_F(EtcdE2E, ACrashLoopStopsBothNodesWithDoNotRequeue) {
  const std::string endpoints = cluster_.endpoints();
  expect_crash_loop_stops_the_job(
      CrashLoopJob{[&](std::size_t i) {
                     return etcd_flags("2", endpoints, "loop", static_cast<int>(i), k_fast_conf);
                   },
                   false});
}

namespace {

/// How many keys etcd holds whose name contains `part`.
std::size_t keys_with(const EtcdCluster& cluster, const std::string& part) {
  std::size_t n = 0;
  std::istringstream in(etcd_keys(cluster));
  for (std::string key; std::getline(in, key);) {
    n += contains(key, part) ? 1U : 0U;
  }
  return n;
}

}  // namespace

TEST_F(EtcdE2E3, ABriefQuorumLossIsRiddenOutAndALastingOneEndsTheJobWithOneClearError) {
  std::vector<std::string> dirs{make_temp_dir("ddprun-etcd-quorum-"),
                                make_temp_dir("ddprun-etcd-quorum-")};
  Agents agents;
  for (int k = 0; k < 2; ++k) {
    agents.start(concat(concat(clean_ddprun(), etcd_flags("2", cluster_.endpoints(), "quorum", k,
                                                          k_leader_loss_conf)),
                        rounds(dirs[static_cast<std::size_t>(k)], dirs[0] + "/never")));
  }
  ASSERT_TRUE(all_started_with_world(dirs, "2")) << agents.all_logs();
  // Two of three members freeze for less than the keep-alive bound (6 s): calls wait, the job
  // carries on.
  cluster_.pause_member(1, true);
  cluster_.pause_member(2, true);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the outage, not a sync
  cluster_.pause_member(1, false);
  cluster_.pause_member(2, false);
  EXPECT_FALSE(eventually([&] { return starts(dirs[0]).size() > 1 || starts(dirs[1]).size() > 1; },
                          std::chrono::seconds(6)))
      << "the workers were restarted:\n"
      << agents.all_logs();
  // For good: no quorum, so nothing can be read; each agent gives up after the bound.
  cluster_.kill_member(1);
  cluster_.kill_member(2);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(agents.wait(k), 1) << agents.all_logs();
    EXPECT_TRUE(contains(agents.err(k), "lost the rendezvous store")) << agents.err(k);
    EXPECT_TRUE(contains(agents.err(k), "127.0.0.1:" + std::to_string(cluster_.client_port(0))))
        << "the error names the member that was asked:\n"
        << agents.err(k);
    EXPECT_EQ(starts(dirs[k]).size(), 1u) << "no restart without a store";
  }
}

TEST_F(EtcdE2E, AnAgentKilledWhileJoiningIsLeftOutOfTheRound) {
  const std::string conf =
      "join_timeout=30,last_call_timeout=4,keep_alive_interval=1,keep_alive_max_attempt=2";
  std::vector<std::string> dirs{make_temp_dir("ddprun-etcd-join-"),
                                make_temp_dir("ddprun-etcd-join-"),
                                make_temp_dir("ddprun-etcd-join-")};
  const std::string release = dirs[0] + "/release";
  touch(release);
  auto flags = [&](int k) {
    return concat(concat(clean_ddprun(), etcd_flags("2:3", cluster_.endpoints(), "join", k, conf)),
                  rounds(dirs[static_cast<std::size_t>(k)], release));
  };
  Agents agents;
  agents.start(flags(0));
  ASSERT_TRUE(eventually([&] { return keys_with(cluster_, "/0/slot/1") == 1; }, k_event_timeout));
  agents.start(flags(1));
  ASSERT_TRUE(eventually([&] { return keys_with(cluster_, "/0/slot/2") == 1; }, k_event_timeout));
  agents.signal(1, SIGKILL);  // in round 0's last call: it cannot have closed with 2 of 3
  EXPECT_EQ(agents.wait(1), 128 + SIGKILL);
  // Its lease expires (TTL 3 s) and takes its keys: the closer finds its slot empty.
  ASSERT_TRUE(eventually([&] { return keys_with(cluster_, "/alive/") == 1; }, k_event_timeout));
  agents.start(flags(2));
  EXPECT_EQ(agents.wait(0), 0) << agents.all_logs();
  EXPECT_EQ(agents.wait(2), 0) << agents.all_logs();
  EXPECT_TRUE(starts(dirs[1]).empty()) << agents.all_logs();
  for (std::size_t k : {0u, 2u}) {
    ASSERT_EQ(starts(dirs[k]).size(), 1u) << agents.all_logs();
    EXPECT_EQ(starts(dirs[k]).back()["group_world"], "2");
  }
}

TEST_F(EtcdE2E, AJobWhoseAgentWasKilledWhileFinishingLeavesTheIdUsable) {
  std::vector<std::string> dirs{make_temp_dir("ddprun-etcd-end-"),
                                make_temp_dir("ddprun-etcd-end-")};
  Agents first;
  for (int k = 0; k < 2; ++k) {
    const auto dir = dirs[static_cast<std::size_t>(k)];
    first.start(concat(
        concat(clean_ddprun(), etcd_flags("2", cluster_.endpoints(), "end", k, k_leader_loss_conf)),
        rounds(dir, dir + "/release")));
  }
  ASSERT_TRUE(eventually(
      [&] {
        return last_start_has(dirs[0], "world", "2") && last_start_has(dirs[1], "world", "2");
      },
      k_event_timeout))
      << first.all_logs();
  // Agent 0's workers finish: it counts itself done and waits in the exit barrier for agent 1,
  // where it is killed; agent 1 then finishes, closes the run and, the last one out but for
  // the dead agent whose lease still lives, waits for that lease to run out (issue #23) and
  // removes the run's keys.
  touch(dirs[0] + "/release");
  ASSERT_TRUE(eventually([&] { return keys_with(cluster_, "/0/done") == 1; }, k_event_timeout))
      << first.all_logs();
  first.signal(0, SIGKILL);
  touch(dirs[1] + "/release");
  EXPECT_EQ(first.wait(0), 128 + SIGKILL);
  EXPECT_EQ(first.wait(1), 0) << first.all_logs();
  EXPECT_EQ(run_keys(cluster_), "") << "the ended job's keys outlived it\n" << first.all_logs();
  // A new job with the same id starts cleanly.
  std::vector<std::string> again{make_temp_dir("ddprun-etcd-end-"),
                                 make_temp_dir("ddprun-etcd-end-")};
  const std::string release = again[0] + "/release";
  Agents second;
  for (int k = 0; k < 2; ++k) {
    second.start(concat(concat(clean_ddprun(), etcd_flags("2", cluster_.endpoints(), "end", k)),
                        rounds(again[static_cast<std::size_t>(k)], release)));
  }
  ASSERT_TRUE(eventually(
      [&] {
        return last_start_has(again[0], "world", "2") && last_start_has(again[1], "world", "2");
      },
      k_event_timeout))
      << second.all_logs();
  touch(release);
  EXPECT_EQ(second.wait(0), 0) << second.all_logs();
  EXPECT_EQ(second.wait(1), 0) << second.all_logs();
  for (const auto& dir : again) {
    EXPECT_EQ(starts(dir).size(), 1u) << second.all_logs();
  }
  EXPECT_EQ(run_keys(cluster_), "") << "no generation was left behind";
}

/// Issue #23: a busy shared etcd. Another client writes and compacts the history to the newest
/// revision every 0.1 s (plus the time etcdctl takes) while three agents restart after one rank's
/// failure: no agent may die of a watch whose start revision was compacted, and the job ends as it
/// would on a quiet cluster.
TEST_F(EtcdE2E3, AJobRestartsAndFinishesWhileEtcdCompactsItsHistory) {
  std::atomic<bool> stop{false};
  std::string compaction_error;
  std::thread compactor([&] {
    for (int i = 0; i < 1200 && !stop; ++i) {  // at most 120 s
      auto why = cluster_.write_and_compact("/elsewhere/writer");
      if (!why.empty() && compaction_error.empty()) {
        compaction_error = why;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  const std::string release = make_temp_dir("ddprun-etcd-compact-") + "/release";
  Agents agents;
  std::vector<std::string> dirs;
  for (int k = 0; k < 3; ++k) {
    dirs.push_back(make_temp_dir("ddprun-etcd-compact-"));
    auto flags =
        concat(etcd_flags("3", cluster_.endpoints(), "compacted", k), {"--max_restarts", "2"});
    agents.start(concat(concat(clean_ddprun(), flags),
                        rounds(dirs.back(), release, k == 0 ? "fail_first" : "")));
  }
  const bool restarted = eventually(
      [&] {
        return last_start_has(dirs[0], "restart", "1") && last_start_has(dirs[1], "restart", "1") &&
               last_start_has(dirs[2], "restart", "1");
      },
      k_event_timeout);
  touch(release);
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(agents.wait(k), 0) << agents.all_logs();
  }
  stop = true;
  compactor.join();
  ASSERT_TRUE(restarted) << agents.all_logs();
  EXPECT_EQ(compaction_error, "") << "the test's compaction did not run";
  for (const auto& dir : dirs) {
    EXPECT_EQ(starts(dir).size(), 2U) << "two attempts on every node\n" << agents.all_logs();
  }
  EXPECT_FALSE(contains(agents.all_logs(), "cancelled")) << agents.all_logs();
}

// Node health checks (--health-check, issue #27) on etcd-v3: the unhealthy node does not join
// and withdraws (exit 3, its lease revoked); the other re-forms alone (--nnodes 1:2), learns
// why from the header and finishes.
TEST_F(EtcdE2E, NodeWhoseHealthCheckFailsIsLeftOutAndTheOtherFinishesAlone) {
  const std::string endpoints = cluster_.endpoints();
  expect_unhealthy_node_left_out(
      [&](std::size_t i) { return etcd_flags("1:2", endpoints, "unhealthy", static_cast<int>(i)); },
      Arrival::agent0_first);
}

// The unhealthy node is the first and only agent of its generation, and gone before the other
// starts: the record of why stays in etcd for it (it was deleted with the generation).
TEST_F(EtcdE2E, NodeLeftOutBeforeAnyOtherArrivedIsStillNamedToTheNodesThatCome) {
  const std::string endpoints = cluster_.endpoints();
  expect_unhealthy_node_left_out(
      [&](std::size_t i) { return etcd_flags("1:2", endpoints, "unhealthy", static_cast<int>(i)); },
      Arrival::unhealthy_first);
}
