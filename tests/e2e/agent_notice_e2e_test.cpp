// End-to-end tests of the guardian's death notice (process/guardian_notice.hpp,
// app/agent_died.hpp): a SIGKILLed agent's guardian tells the rendezvous at once, so the
// survivor re-forms long before the keep-alive bound (set to 60 s here, beyond every wait of
// the test: only the notice can explain the re-form). c10d, then etcd-v3 on a real etcd.

#include <gtest/gtest.h>

#include <signal.h>

#include "multinode_agents.hpp"
#include "support/etcd_cluster.hpp"

using namespace ddprun::test;
using namespace ddprun::test::multinode;

namespace {

/// A keep-alive bound of 60 s (20 s x 3): longer than k_event_timeout.
const std::string k_slow_keep_alive =
    "join_timeout=30,last_call_timeout=1,keep_alive_interval=20,keep_alive_max_attempt=3";

const std::string k_told = "was killed; told rendezvous";

/// Two agents of `job` (agent 0 started first); agent 1 is killed once both run a round of
/// two. Checks the survivor re-forms alone and finishes, and that nothing of the killed agent
/// (its workers, its guardian, the guardian's command) is left. Returns the killed one's stderr.
std::string kill_one_and_reform(const std::vector<std::vector<std::string>>& job, bool host_first) {
  const std::vector<std::string> dirs{make_temp_dir("ddprun-notice-"),
                                      make_temp_dir("ddprun-notice-")};
  const std::string release = dirs[0] + "/release";
  const std::string doomed = unique_tag();
  Agents agents;
  auto first = concat(concat(clean_ddprun(), job[0]), rounds(dirs[0], release));
  if (host_first) {
    EXPECT_TRUE(start_host(agents, first)) << agents.all_logs();
  } else {
    agents.start(first);
  }
  agents.start(concat(concat(clean_ddprun(doomed), job[1]), rounds(dirs[1], release)));
  EXPECT_TRUE(all_started_with_world(dirs, "2")) << agents.all_logs();
  agents.signal(1, SIGKILL);
  EXPECT_EQ(agents.wait(1), 128 + SIGKILL);
  EXPECT_TRUE(eventually([&] { return last_start_has(dirs[0], "world", "1"); }, k_event_timeout))
      << "the survivor did not re-form within the test's bound\n"
      << agents.all_logs();
  EXPECT_TRUE(eventually([&] { return processes_with_env(doomed).empty(); }, k_event_timeout))
      << "a process of the killed agent outlived it";
  touch(release);
  EXPECT_EQ(agents.wait(0), 0) << agents.all_logs();
  const auto err = agents.err(0);
  EXPECT_TRUE(contains(err, "membership changed (lost " + loopback(1))) << err;
  return agents.err(1);
}

std::vector<std::string> etcd_agent(const std::string& endpoints, const std::string& id, int k) {
  return {"--nnodes",         "1:2",
          "--rdzv_backend",   "etcd-v3",
          "--rdzv_endpoint",  endpoints,
          "--rdzv_id",        id,
          "--local_addr",     loopback(k),
          "--nproc_per_node", "1",
          "--rdzv_conf",      k_slow_keep_alive};
}

}  // namespace

TEST(AgentNoticeE2E, C10dSurvivorReformsAtOnceWhenAnAgentIsKilled) {
  const int port = free_port();
  const auto killed =
      kill_one_and_reform({c10d_flags("1:2", port, 1, loopback(0), k_slow_keep_alive),
                           c10d_flags("1:2", port, 1, loopback(1), k_slow_keep_alive)},
                          true);
  EXPECT_TRUE(contains(killed, k_told)) << killed;
  EXPECT_TRUE(contains(killed, "ends)")) << "the guardian's command ended the round\n" << killed;
}

TEST(AgentNoticeE2E, EtcdSurvivorReformsAtOnceWhenAnAgentIsKilled) {
  DDPRUN_SKIP_WITHOUT_ETCD();
  EtcdCluster cluster;
  ASSERT_EQ(cluster.start(), "");
  const auto killed = kill_one_and_reform(
      {etcd_agent(cluster.endpoints(), "notice", 0), etcd_agent(cluster.endpoints(), "notice", 1)},
      false);
  // The survivor, woken by the lease's keys vanishing, may end the round first.
  EXPECT_TRUE(contains(killed, k_told)) << killed;
  EXPECT_TRUE(contains(killed, "revoked its lease")) << killed;
}
