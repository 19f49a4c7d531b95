// SkyPilot env fixtures: what `sky launch` with num_nodes gives the run section of each node.

#include "ddprun/sched/detect.hpp"
#include "ddprun/sched/ports.hpp"

#include <gtest/gtest.h>

namespace ddprun::sched {
namespace {

using Hosts = std::vector<std::string>;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

Detected ok(const Result<Detected>& r) {
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? *r : Detected{};
}

std::string err(const Result<Detected>& r) {
  EXPECT_FALSE(r.has_value());
  return r ? "" : r.error().message;
}

/// Node 1 of a three-node task with 8 GPUs per node, as SkyPilot writes it (trailing newline).
util::Env sky_env() {
  return {{"SKYPILOT_NODE_IPS", "10.0.0.5\n10.0.0.7\n10.0.0.9\n"},
          {"SKYPILOT_NUM_NODES", "3"},
          {"SKYPILOT_NODE_RANK", "1"},
          {"SKYPILOT_NUM_GPUS_PER_NODE", "8"},
          {"SKYPILOT_TASK_ID", "sky-2024-05-01-10-00-00-000001_train_3"}};
}

util::Env with(util::Env env, const std::string& name, const std::string& value) {
  env.set(name, value);
  return env;
}

TEST(SkypilotDetect, NodesRankHeadAndRunIdComeFromTheTask) {
  auto d = ok(detect_skypilot(sky_env()));
  EXPECT_EQ(d.scheduler, "skypilot");
  EXPECT_EQ(d.hosts, (Hosts{"10.0.0.5", "10.0.0.7", "10.0.0.9"}));
  EXPECT_EQ(d.nnodes, (Value{"3", "skypilot: SKYPILOT_NUM_NODES"}));
  EXPECT_EQ(d.node_rank, (Value{"1", "skypilot: SKYPILOT_NODE_RANK"}));
  EXPECT_EQ(d.rdzv_endpoint_host, (Value{"10.0.0.5", "skypilot: SKYPILOT_NODE_IPS (first host)"}));
  EXPECT_EQ(d.rdzv_id,
            (Value{"sky-2024-05-01-10-00-00-000001_train_3", "skypilot: SKYPILOT_TASK_ID"}));
  EXPECT_EQ(d.port_candidates,
            candidate_ports(port_key_of("sky-2024-05-01-10-00-00-000001_train_3")));
  EXPECT_EQ(d.rdzv_port->origin, "skypilot: SKYPILOT_TASK_ID");
  EXPECT_EQ(d.nproc_hint, (Value{"8", "skypilot: SKYPILOT_NUM_GPUS_PER_NODE"}));
  EXPECT_FALSE(d.tasks_on_node.has_value());
  EXPECT_TRUE(d.warnings.empty());
}

TEST(SkypilotDetect, AbsentWithoutNodeRank) {
  auto env = sky_env();
  env.unset("SKYPILOT_NODE_RANK");
  EXPECT_FALSE(ok(detect_skypilot(env)).is_present());
  EXPECT_FALSE(ok(detect_skypilot(with(env, "SKYPILOT_NODE_RANK", ""))).is_present());
}

TEST(SkypilotDetect, WithoutTaskIdThePortsComeFromTheIpListAlike) {
  auto env = sky_env();
  env.unset("SKYPILOT_TASK_ID");
  auto d = ok(detect_skypilot(env));
  EXPECT_FALSE(d.rdzv_id.has_value());
  EXPECT_EQ(d.rdzv_port->origin, "skypilot: SKYPILOT_NODE_IPS");
  // Every node sees the same list, however its blanks are spread.
  auto other = ok(detect_skypilot(with(env, "SKYPILOT_NODE_IPS", "10.0.0.5 10.0.0.7\n\n10.0.0.9")));
  EXPECT_EQ(d.port_candidates, other.port_candidates);
}

TEST(SkypilotDetect, NodeCountDefaultsToTheIpList) {
  auto env = sky_env();
  env.unset("SKYPILOT_NUM_NODES");
  EXPECT_EQ(ok(detect_skypilot(env)).nnodes, (Value{"3", "skypilot: SKYPILOT_NODE_IPS"}));
}

TEST(SkypilotDetect, OneNodeTask) {
  util::Env env{{"SKYPILOT_NODE_IPS", "172.31.4.2"},
                {"SKYPILOT_NUM_NODES", "1"},
                {"SKYPILOT_NODE_RANK", "0"},
                {"SKYPILOT_NUM_GPUS_PER_NODE", "0"}};
  auto d = ok(detect_skypilot(env));
  EXPECT_EQ(d.nnodes->text, "1");
  EXPECT_EQ(d.node_rank->text, "0");
  EXPECT_FALSE(d.nproc_hint.has_value());  // a CPU task: no GPU hint
}

TEST(SkypilotDetect, VisibleDevicesBeatTheTaskGpuCount) {
  auto d = ok(detect_skypilot(with(sky_env(), "CUDA_VISIBLE_DEVICES", "0,1")));
  EXPECT_EQ(d.nproc_hint, (Value{"2", "env: CUDA_VISIBLE_DEVICES"}));
}

TEST(SkypilotDetect, RejectsRankOutsideTheNodes) {
  for (const char* rank : {"3", "-1", "x", "1.0"}) {
    EXPECT_EQ(
        err(detect_skypilot(with(sky_env(), "SKYPILOT_NODE_RANK", rank))),
        "skypilot: SKYPILOT_NODE_RANK='" + std::string(rank) + "': expected an integer in [0, 2]");
  }
}

TEST(SkypilotDetect, RejectsANodeCountThatIsNotAPositiveInteger) {
  for (const char* count : {"0", "-3", "three", "3x"}) {
    EXPECT_EQ(err(detect_skypilot(with(sky_env(), "SKYPILOT_NUM_NODES", count))),
              "skypilot: SKYPILOT_NUM_NODES='" + std::string(count) +
                  "': expected an integer in [1, 1000000]");
  }
}

TEST(SkypilotDetect, RejectsAGpuCountThatIsNotACount) {
  for (const char* gpus : {"-1", "0.5", "eight"}) {
    EXPECT_EQ(err(detect_skypilot(with(sky_env(), "SKYPILOT_NUM_GPUS_PER_NODE", gpus))),
              "skypilot: SKYPILOT_NUM_GPUS_PER_NODE='" + std::string(gpus) +
                  "': expected an integer in [0, 1000000]");
  }
}

TEST(SkypilotDetect, RejectsAnIpListThatDisagreesWithTheNodeCount) {
  EXPECT_EQ(err(detect_skypilot(with(sky_env(), "SKYPILOT_NUM_NODES", "2"))),
            "skypilot: SKYPILOT_NUM_NODES='2': expected the number of IPs in "
            "SKYPILOT_NODE_IPS='10.0.0.5\\n10.0.0.7\\n10.0.0.9\\n' (3)");
}

TEST(SkypilotDetect, RejectsAnEmptyOrMissingIpList) {
  EXPECT_EQ(err(detect_skypilot(with(sky_env(), "SKYPILOT_NODE_IPS", "\n"))),
            "skypilot: SKYPILOT_NODE_IPS='\\n': expected the nodes' IPs, one per line, head first");
  auto env = sky_env();
  env.unset("SKYPILOT_NODE_IPS");
  EXPECT_EQ(err(detect_skypilot(env)),
            "skypilot: SKYPILOT_NODE_RANK is set but SKYPILOT_NODE_IPS is not");
}

TEST(SkypilotDetect, ErrorsAreOneLine) {
  auto msg = err(detect_skypilot(with(sky_env(), "SKYPILOT_NUM_NODES", "5")));
  EXPECT_FALSE(contains(msg, "\n")) << msg;
}

}  // namespace
}  // namespace ddprun::sched
