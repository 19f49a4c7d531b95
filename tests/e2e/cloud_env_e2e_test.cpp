// End-to-end tests of the cloud launchers that start ddprun with no flags (issue 41 §4): two
// agents on this machine, each with the environment its launcher gives one node, and nothing on
// the command line but the training script.
// - SkyPilot runs the task's run section on every node with SKYPILOT_NODE_IPS (here 127.0.0.2
//   and 127.0.0.3, loopback addresses standing in for the nodes' IPs), SKYPILOT_NUM_NODES,
//   SKYPILOT_NODE_RANK, SKYPILOT_NUM_GPUS_PER_NODE and SKYPILOT_TASK_ID.
// - Kubeflow Trainer v2's torch runtime gives every pod PET_NNODES, PET_NPROC_PER_NODE,
//   PET_NODE_RANK, PET_MASTER_ADDR (`<job>-node-0-0.<job>`, a name of the cluster's DNS) and
//   PET_MASTER_PORT=29500, and runs `torchrun train.py`.
// Ports: PET_MASTER_PORT from free_port() (a variable a user may set too), except in the test of
// the port derived from SKYPILOT_TASK_ID, whose task id is this test process's own (the store
// host skips a taken candidate port, and the other agent finds it).

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "multinode_agents.hpp"

using namespace ddprun::test;
using namespace ddprun::test::multinode;

namespace {

constexpr const char* k_sky_ips = "127.0.0.2\n127.0.0.3";

/// What `sky launch` with num_nodes: 2 gives node `rank`, plus PET_MASTER_PORT when port > 0.
std::vector<std::string> skypilot_env(int rank, const std::string& task_id, int port) {
  std::vector<std::string> env{"SKYPILOT_NODE_IPS=" + std::string(k_sky_ips),
                               "SKYPILOT_NUM_NODES=2", "SKYPILOT_NODE_RANK=" + std::to_string(rank),
                               "SKYPILOT_NUM_GPUS_PER_NODE=0", "SKYPILOT_TASK_ID=" + task_id};
  if (port > 0) {
    env.push_back("PET_MASTER_PORT=" + std::to_string(port));
  }
  return env;
}

/// ddprun under `env -i` with `env` and no flag: the run section's `ddprun train.py`.
std::vector<std::string> bare_ddprun(const std::vector<std::string>& env,
                                     const std::vector<std::string>& script) {
  std::vector<std::string> argv{"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=/root"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.push_back(ddprun_bin());
  return concat(argv, script);
}

/// A task id of this test process alone, so no other test's store holds its run's marker.
std::string task_id(const std::string& name) {
  return "sky-e2e-" + name + "_" + std::to_string(getpid());
}

/// A Python training script that writes its environment to $1/env_$RANK.txt, as envdump.sh.
std::string python_envdump(const std::string& dir) {
  std::string path = dir + "/train.py";
  std::ofstream(path) << "import os, sys\n"
                         "with open(os.path.join(sys.argv[1], 'env_%s.txt' % os.environ['RANK']),"
                         " 'w') as f:\n"
                         "    for k, v in sorted(os.environ.items()):\n"
                         "        f.write('%s=%s\\n' % (k, v))\n";
  return path;
}

/// "VALUE  (ORIGIN)" of `key` in --print-config's output, "" when it has no such line.
std::string shown_setting(const std::string& out, const std::string& key) {
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    const auto eq = line.find(" = ");
    if (line.rfind(key + " ", 0) == 0 && eq != std::string::npos) {
      return line.substr(eq + 3);
    }
  }
  return "";
}

/// Starts node 0 (the store host) and node 1, and expects both to exit 0.
void run_two_nodes(const std::vector<std::string>& node0, const std::vector<std::string>& node1) {
  Agents agents;
  agents.start(node0);
  agents.start(node1);
  EXPECT_EQ(agents.wait(0), 0) << agents.all_logs();
  EXPECT_EQ(agents.wait(1), 0) << agents.all_logs();
}

/// The env files of ranks 0 and 1 (one worker per node) say a two-node, two-worker job with
/// the store on `master_addr`.
void expect_two_node_ranks(const std::string& dir, const std::string& master_addr) {
  for (int rank = 0; rank < 2; ++rank) {
    auto env = parse_env_file(dir + "/env_" + std::to_string(rank) + ".txt");
    EXPECT_EQ(env["RANK"], std::to_string(rank));
    EXPECT_EQ(env["WORLD_SIZE"], "2");
    EXPECT_EQ(env["GROUP_RANK"], std::to_string(rank));
    EXPECT_EQ(env["GROUP_WORLD_SIZE"], "2");
    EXPECT_EQ(env["LOCAL_RANK"], "0");
    EXPECT_EQ(env["LOCAL_WORLD_SIZE"], "1");
    EXPECT_EQ(env["MASTER_ADDR"], master_addr);
  }
}

}  // namespace

TEST(SkypilotE2E, TwoNodesNeedNoFlags) {
  const auto dir = make_temp_dir("ddprun-sky-");
  const int port = free_port();
  const std::vector<std::string> script{"--no_python", worker("envdump.sh"), dir};
  const auto id = task_id("noflags");
  run_two_nodes(bare_ddprun(skypilot_env(0, id, port), script),
                bare_ddprun(skypilot_env(1, id, port), script));
  expect_two_node_ranks(dir, "127.0.0.2");
  EXPECT_EQ(parse_env_file(dir + "/env_1.txt")["MASTER_PORT"], std::to_string(port));
}

// Without PET_MASTER_PORT the port is derived from SKYPILOT_TASK_ID, as from a Slurm job id.
TEST(SkypilotE2E, TheTaskIdGivesThePort) {
  const auto dir = make_temp_dir("ddprun-sky-");
  const std::vector<std::string> script{"--no_python", worker("envdump.sh"), dir};
  const auto id = task_id("derived");
  auto shown = run(bare_ddprun(skypilot_env(0, id, 0), {"--print-config", "/bin/true"}));
  ASSERT_EQ(shown.status, 0) << shown.err;
  run_two_nodes(bare_ddprun(skypilot_env(0, id, 0), script),
                bare_ddprun(skypilot_env(1, id, 0), script));
  expect_two_node_ranks(dir, "127.0.0.2");
  const auto used = parse_env_file(dir + "/env_1.txt")["MASTER_PORT"];
  EXPECT_TRUE(contains(shown_setting(shown.out, "master_port"), "(skypilot: SKYPILOT_TASK_ID)"))
      << shown.out;
  EXPECT_GE(std::stoi(used.empty() ? "0" : used), 29400) << used;
  EXPECT_LT(std::stoi(used.empty() ? "0" : used), 32400) << used;
}

TEST(SkypilotE2E, PrintConfigNamesEachVariable) {
  auto r = run(bare_ddprun(skypilot_env(1, task_id("show"), free_port()),
                           {"--print-config", "--no_python", "/bin/true"}));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(shown_setting(r.out, "nnodes"), "2:2  (skypilot: SKYPILOT_NUM_NODES)") << r.out;
  EXPECT_EQ(shown_setting(r.out, "node_rank"), "1  (skypilot: SKYPILOT_NODE_RANK)") << r.out;
  EXPECT_EQ(shown_setting(r.out, "master_addr"),
            "127.0.0.2  (skypilot: SKYPILOT_NODE_IPS (first host))")
      << r.out;
  EXPECT_EQ(shown_setting(r.out, "rdzv_backend"), "static  (default)") << r.out;
}

TEST(SkypilotE2E, ARankOutsideTheNodesStopsWithOneLine) {
  auto env = skypilot_env(0, task_id("bad"), free_port());
  env[2] = "SKYPILOT_NODE_RANK=2";
  auto r = run(bare_ddprun(env, {"--no_python", "/bin/true"}));
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "skypilot: SKYPILOT_NODE_RANK='2': expected an integer in [0, 1]"))
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

namespace {

/// What Kubeflow Trainer's torch runtime gives the pod of node `rank`.
std::vector<std::string> kubeflow_env(int rank, const std::string& master_addr, int port) {
  return {"PET_NNODES=2", "PET_NPROC_PER_NODE=1", "PET_NODE_RANK=" + std::to_string(rank),
          "PET_MASTER_ADDR=" + master_addr, "PET_MASTER_PORT=" + std::to_string(port)};
}

/// `ddprun train.py DIR` in the pod of node `rank`.
std::vector<std::string> kubeflow_pod(int rank, const std::string& master_addr, int port,
                                      const std::string& dir) {
  return bare_ddprun(kubeflow_env(rank, master_addr, port), {python_envdump(dir), dir});
}

/// `argv` in a private mount namespace whose /etc/hosts maps `name` to 127.0.0.1.
std::vector<std::string> with_hosts_entry(const std::string& name, const std::string& dir,
                                          const std::vector<std::string>& argv) {
  const std::string hosts = dir + "/hosts";
  std::ofstream(hosts) << "127.0.0.1 localhost " << name << "\n";
  std::vector<std::string> out{"/usr/bin/unshare",
                               "--mount",
                               "--fork",
                               "/bin/sh",
                               "-c",
                               "mount --bind \"$0\" /etc/hosts && exec \"$@\"",
                               hosts};
  return concat(out, argv);
}

}  // namespace

// `localhost` stands in for the master pod's cluster DNS name.
TEST(KubeflowTrainerE2E, TorchRuntimeEnvironmentNeedsNoFlags) {
  const auto dir = make_temp_dir("ddprun-kf-");
  const int port = free_port();
  auto shown = run(bare_ddprun(kubeflow_env(1, "localhost", port), {"--print-config", "t.py"}));
  ASSERT_EQ(shown.status, 0) << shown.err;
  EXPECT_EQ(shown_setting(shown.out, "rdzv_backend"), "static  (default)") << shown.out;
  EXPECT_EQ(shown_setting(shown.out, "master_addr"), "localhost  (env PET_MASTER_ADDR)")
      << shown.out;
  EXPECT_EQ(shown_setting(shown.out, "node_rank"), "1  (env PET_NODE_RANK)") << shown.out;
  run_two_nodes(kubeflow_pod(0, "localhost", port, dir), kubeflow_pod(1, "localhost", port, dir));
  expect_two_node_ranks(dir, "localhost");
  EXPECT_EQ(parse_env_file(dir + "/env_0.txt")["MASTER_PORT"], std::to_string(port));
}

// The master's name as the torch runtime writes it, resolved by a private /etc/hosts.
TEST(KubeflowTrainerE2E, MasterPodNameFromTheRuntime) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root for a mount namespace";
  }
  const auto dir = make_temp_dir("ddprun-kf-");
  const int port = free_port();
  const std::string master = "myjob-node-0-0.myjob";
  run_two_nodes(with_hosts_entry(master, dir, kubeflow_pod(0, master, port, dir)),
                with_hosts_entry(master, dir, kubeflow_pod(1, master, port, dir)));
  expect_two_node_ranks(dir, master);
}
