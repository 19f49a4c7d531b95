// End-to-end tests of multi-node jobs (spec torchrun.md §3-§4): several ddprun agents in one test,
// each on its own loopback address through --local_addr, the store on 127.0.0.1:<free port>.
// Static and c10d rank tables, duplicate --node_rank values, the join timeout, the warning of an
// incomplete rendezvous, SIGTERM while joining, real gloo jobs. Elastic behaviour is in
// multinode_elastic_e2e_test.cpp.

#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>
#include <numeric>
#include <set>

#include "multinode_agents.hpp"

using namespace ddprun::test;
using namespace ddprun::test::multinode;
namespace fs = std::filesystem;

namespace {

constexpr const char* k_no_torch = "/usr/bin/python3 cannot import torch (install python3-torch)";

std::vector<std::string> envdump(const std::string& dir) {
  return {"--no_python", worker("envdump.sh"), dir};
}

/// The envdump.sh files of one agent's workers (env_<RANK>.txt), in file-name order.
std::vector<std::map<std::string, std::string>> worker_envs(const std::string& dir) {
  std::vector<std::map<std::string, std::string>> out;
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    names.insert(e.path().string());
  }
  out.reserve(names.size());
  for (const auto& n : names) {
    out.push_back(parse_env_file(n));
  }
  return out;
}

void expect_static_rank_table(const std::vector<int>& nprocs) {
  const int nnodes = static_cast<int>(nprocs.size());
  const int port = free_port();
  const int world = std::accumulate(nprocs.begin(), nprocs.end(), 0);
  Agents agents;
  std::vector<std::string> dirs(nprocs.size());
  for (int k = nnodes - 1; k >= 0; --k) {  // node 0, the store host, starts last
    dirs[static_cast<std::size_t>(k)] = make_temp_dir("ddprun-mn-static-");
    agents.start(concat(
        concat(clean_ddprun(),
               static_flags(nnodes, k, port, nprocs[static_cast<std::size_t>(k)], loopback(k))),
        envdump(dirs[static_cast<std::size_t>(k)])));
  }
  for (std::size_t i = 0; i < agents.size(); ++i) {
    ASSERT_EQ(agents.wait(i), 0) << agents.all_logs();
  }
  int base = 0;
  for (int k = 0; k < nnodes; ++k) {
    const int n = nprocs[static_cast<std::size_t>(k)];
    for (int local = 0; local < n; ++local) {
      const auto rank = std::to_string(base + local);
      auto env = parse_env_file(dirs[static_cast<std::size_t>(k)] + "/env_" + rank + ".txt");
      SCOPED_TRACE("node " + std::to_string(k) + " local_rank " + std::to_string(local));
      EXPECT_EQ(env["RANK"], rank);
      EXPECT_EQ(env["LOCAL_RANK"], std::to_string(local));
      EXPECT_EQ(env["WORLD_SIZE"], std::to_string(world));
      EXPECT_EQ(env["GROUP_RANK"], std::to_string(k));
      EXPECT_EQ(env["GROUP_WORLD_SIZE"], std::to_string(nnodes));
      EXPECT_EQ(env["LOCAL_WORLD_SIZE"], std::to_string(n));
      EXPECT_EQ(env["ROLE_RANK"], rank);
      EXPECT_EQ(env["ROLE_WORLD_SIZE"], std::to_string(world));
      EXPECT_EQ(env["MASTER_ADDR"], "127.0.0.1");
      EXPECT_EQ(env["MASTER_PORT"], std::to_string(port));
      EXPECT_EQ(env["TORCHELASTIC_USE_AGENT_STORE"], "True");
    }
    base += n;
  }
}

/// All agents start at once; whichever binds the endpoint first hosts the store and must be
/// group rank 0; the others follow in join order (docs/rendezvous.md "Group ranks").
void expect_c10d_rank_table(const std::vector<int>& nprocs) {
  const int port = free_port();
  const int world = std::accumulate(nprocs.begin(), nprocs.end(), 0);
  const auto nnodes = std::to_string(nprocs.size());
  Agents agents;
  std::vector<std::string> dirs;
  for (std::size_t k = 0; k < nprocs.size(); ++k) {
    dirs.push_back(make_temp_dir("ddprun-mn-c10d-"));
    agents.start(
        concat(concat(clean_ddprun(), c10d_flags(nnodes, port, nprocs[k],
                                                 loopback(static_cast<int>(k)), "join_timeout=30")),
               envdump(dirs[k])));
  }
  for (std::size_t i = 0; i < agents.size(); ++i) {
    ASSERT_EQ(agents.wait(i), 0) << agents.all_logs();
  }
  std::vector<std::size_t> hosts;
  std::map<int, std::size_t> agent_of_group_rank;
  for (std::size_t k = 0; k < nprocs.size(); ++k) {
    if (contains(agents.err(k), k_hosting)) {
      hosts.push_back(k);
    }
    auto envs = worker_envs(dirs[k]);
    ASSERT_EQ(envs.size(), static_cast<std::size_t>(nprocs[k])) << dirs[k];
    agent_of_group_rank[std::stoi(envs[0]["GROUP_RANK"])] = k;
  }
  ASSERT_EQ(hosts.size(), 1U) << agents.all_logs();
  ASSERT_EQ(agent_of_group_rank.size(), nprocs.size()) << "group ranks are not distinct";
  EXPECT_EQ(agent_of_group_rank.begin()->first, 0);
  EXPECT_EQ(agent_of_group_rank[0], hosts[0]) << agents.all_logs();
  int base = 0;
  std::string master_port;
  // The others follow join order (rank_order.hpp), which agents started at once do not fix.
  for (const auto& [group_rank, k] : agent_of_group_rank) {
    SCOPED_TRACE("agent " + loopback(static_cast<int>(k)) + " group rank " +
                 std::to_string(group_rank));
    for (auto& env : worker_envs(dirs[k])) {
      EXPECT_EQ(env["RANK"], std::to_string(base + std::stoi(env["LOCAL_RANK"])));
      EXPECT_EQ(env["WORLD_SIZE"], std::to_string(world));
      EXPECT_EQ(env["GROUP_WORLD_SIZE"], nnodes);
      EXPECT_EQ(env["LOCAL_WORLD_SIZE"], std::to_string(nprocs[k]));
      EXPECT_EQ(env["MASTER_ADDR"], loopback(static_cast<int>(hosts[0])));
      EXPECT_EQ(env["TORCHELASTIC_USE_AGENT_STORE"], "True");
      master_port = master_port.empty() ? env["MASTER_PORT"] : master_port;
      EXPECT_EQ(env["MASTER_PORT"], master_port) << "every worker must share one master";
    }
    base += nprocs[k];
  }
}

}  // namespace

TEST(MultinodeE2E, StaticTwoNodesRankTableFollowsNodeRank) { expect_static_rank_table({2, 1}); }

TEST(MultinodeE2E, StaticThreeNodesHeterogeneousRankTable) { expect_static_rank_table({2, 1, 3}); }

TEST(MultinodeE2E, C10dTwoNodesEndpointHostIsGroupRankZero) { expect_c10d_rank_table({1, 2}); }

TEST(MultinodeE2E, C10dFourNodesEndpointHostIsGroupRankZero) {
  expect_c10d_rank_table({1, 2, 1, 3});
}

TEST(MultinodeE2E, StaticDuplicateNodeRankFailsNamingTheRank) {
  const int port = free_port();
  Agents agents;
  auto dir = make_temp_dir("ddprun-mn-dup-");
  for (int rank : {0, 1, 1}) {
    agents.start(
        concat(concat(clean_ddprun(),
                      static_flags(3, rank, port, 1, loopback(static_cast<int>(agents.size())))),
               {"--rdzv_conf", "timeout=20", "--no_python", "/bin/true"}));
  }
  for (std::size_t i = 0; i < agents.size(); ++i) {
    EXPECT_GT(agents.wait(i, std::chrono::seconds(40)), 0) << agents.all_logs();
    EXPECT_TRUE(contains(agents.err(i), "--node-rank 1 is used by two agents")) << agents.err(i);
  }
}

TEST(MultinodeE2E, C10dJoinTimeoutNamesExpectedAndArrivedNodes) {
  Agents agents;
  agents.start(
      concat(concat(clean_ddprun(), c10d_flags("2", free_port(), 1, loopback(0), "join_timeout=2")),
             {"--no_python", "/bin/true"}));
  int status = agents.wait(0, std::chrono::seconds(30));
  EXPECT_GT(status, 0) << agents.err(0);
  EXPECT_TRUE(contains(agents.err(0), "expected 2 nodes, 1 arrived (" + loopback(0) + ")"))
      << agents.err(0);
}

/// One agent of a 2-node static job at the default log level (WARNING), join timeout 8 s.
std::vector<std::string> lone_static_agent(const std::vector<std::string>& flags) {
  return concat({"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=/root", ddprun_bin(), "--nnodes",
                 "2", "--nproc_per_node", "1", "--master_port", std::to_string(free_port()),
                 "--rdzv_conf", "timeout=8"},
                concat(flags, {"--no_python", "/bin/true"}));
}

/// Where the message holding `at` begins: its first line (hints follow on indented lines).
std::size_t message_start(const std::string& err, std::size_t at) {
  auto nl = err.rfind('\n', at);
  std::size_t start = nl == std::string::npos ? 0 : nl + 1;
  while (start > 0 && err[start] == ' ') {
    nl = start >= 2 ? err.rfind('\n', start - 2) : std::string::npos;
    start = nl == std::string::npos ? 0 : nl + 1;
  }
  return start;
}

/// `err` holds `needle` exactly once, in a WARNING message, and no INFO line.
void expect_one_warning(const std::string& err, const std::string& needle) {
  std::size_t count = 0;
  for (auto at = err.find(needle); at != std::string::npos; at = err.find(needle, at + 1)) {
    ++count;
    EXPECT_EQ(err[message_start(err, at)], 'W') << err;
  }
  EXPECT_EQ(count, 1U) << needle << " in:\n" << err;
  // An INFO line every multi-node agent logs: absent at the default level.
  EXPECT_FALSE(contains(err, "the rendezvous is unauthenticated")) << "INFO shown:\n" << err;
}

/// The design card's `ddprun --nnodes 2 --nproc_per_node 4 train.py` typed on two machines
/// (here: one agent whose peer never arrives), and a --node_rank 1 agent whose store host never
/// starts, at the default log level: a WARNING names what is missing and the flags that fix
/// it, once, well before the join timeout.
TEST(MultinodeE2E, IncompleteStaticRendezvousWarnsWhatIsMissingAtDefaultLevel) {
  Agents agents;
  const auto host = agents.start(lone_static_agent({}));
  const auto client = agents.start(lone_static_agent({"--node_rank", "1"}));
  for (auto i : {host, client}) {
    EXPECT_GT(agents.wait(i, std::chrono::seconds(40)), 0) << agents.err(i);
  }
  const auto err = agents.err(host);
  for (const char* part :
       {"is incomplete after", "1/2 nodes arrived", "missing --node_rank 1",
        "--master_addr 127.0.0.1 (the default) is a loopback address",
        "--node_rank was not given, so every node defaults to 0",
        "--master_addr <node-rank-0 host> --node_rank K",
        "--rdzv_backend c10d --rdzv_endpoint <host>:<port>", "srun", "timed out"}) {
    EXPECT_TRUE(contains(err, part)) << part << " not in:\n" << err;
  }
  expect_one_warning(err, "Without a scheduler");
  const auto client_err = agents.err(client);
  expect_one_warning(client_err, "no rendezvous store answers at 127.0.0.1:");
  for (const char* part :
       {"This agent is --node_rank 1 of 2", "--master_addr <node-rank-0 host> --node_rank K"}) {
    EXPECT_TRUE(contains(client_err, part)) << part << " not in:\n" << client_err;
  }
}

TEST(MultinodeE2E, SigtermWhileJoiningExitsPromptly) {
  Agents agents;
  agents.start(concat(
      concat(clean_ddprun(), c10d_flags("2", free_port(), 1, loopback(0), "join_timeout=300")),
      {"--no_python", "/bin/true"}));
  ASSERT_TRUE(
      eventually([&] { return contains(agents.err(0), "starting 1 worker"); }, k_event_timeout))
      << agents.err(0);
  agents.signal(0, SIGTERM);
  int status = agents.wait(0, std::chrono::seconds(15));
  EXPECT_NE(status, -1) << "still joining 15 s after SIGTERM:\n" << agents.err(0);
  EXPECT_NE(status, 0) << agents.err(0);
  EXPECT_TRUE(contains(agents.err(0), "SIGTERM death signal while joining")) << agents.err(0);
}

namespace {

void expect_gloo_job(const std::vector<std::vector<std::string>>& flags) {
  if (!have_torch()) {
    GTEST_SKIP() << k_no_torch;
  }
  Agents agents;
  for (const auto& f : flags) {
    agents.start(concat(concat(clean_ddprun(), f),
                        {"--python", "/usr/bin/python3", worker("gloo_allreduce.py")}));
  }
  for (std::size_t i = 0; i < agents.size(); ++i) {
    ASSERT_EQ(agents.wait(i, std::chrono::seconds(120)), 0) << agents.all_logs();
  }
  std::string out = agents.out(0) + agents.out(1);
  EXPECT_TRUE(contains(out, "rank=0 world=2 allreduce=3.0")) << out << agents.all_logs();
  EXPECT_TRUE(contains(out, "rank=1 world=2 allreduce=3.0")) << out << agents.all_logs();
}

}  // namespace

TEST(MultinodeE2E, GlooAllreduceAcrossTwoStaticAgents) {
  const int port = free_port();
  expect_gloo_job(
      {static_flags(2, 0, port, 1, loopback(0)), static_flags(2, 1, port, 1, loopback(1))});
}

TEST(MultinodeE2E, GlooAllreduceAcrossTwoC10dAgents) {
  const int port = free_port();
  expect_gloo_job({c10d_flags("2", port, 1, loopback(0), "join_timeout=60"),
                   c10d_flags("2", port, 1, loopback(1), "join_timeout=60")});
}

TEST(MultinodeE2E, StaticDuplicateNodeRankZeroFailsNamingTheRank) {
  const int port = free_port();
  const std::vector<std::string> conf{"--rdzv_conf", "timeout=3", "--no_python", "/bin/true"};
  Agents agents;
  ASSERT_TRUE(start_host(
      agents, concat(concat(clean_ddprun(), static_flags(2, 0, port, 1, loopback(0))), conf)))
      << agents.all_logs();
  agents.start(concat(concat(clean_ddprun(), static_flags(2, 0, port, 1, loopback(1))), conf));
  EXPECT_GT(agents.wait(1, std::chrono::seconds(30)), 0) << agents.err(1);
  EXPECT_TRUE(contains(agents.err(1), "--node-rank 0")) << agents.err(1);
  EXPECT_GT(agents.wait(0, std::chrono::seconds(30)), 0) << agents.err(0);
  EXPECT_TRUE(contains(agents.err(0), "expected 2 nodes, 1 arrived")) << agents.err(0);
}
