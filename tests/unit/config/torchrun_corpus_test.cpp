// Real-world torchrun command lines (PyTorch's docs and examples, popular training repositories'
// launch scripts, Kubeflow PyTorchJob/TrainJob PET_* environments, the seeds of spec torchrun.md
// and issue #17) must all be accepted, and parse + resolve must give each worker the environment
// torchrun would (spec §2.1, §3). The rendezvous itself is not run here: a row states this node's
// group rank and the number of nodes that join, as torchrun would assign them.
#include "ddprun/agent/worker_env.hpp"
#include "ddprun/agent/worker_spec.hpp"
#include "ddprun/cli/args.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/config/rdzv_conf.hpp"
#include "ddprun/rdzv/settings.hpp"
#include "ddprun/util/strings.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace ddprun;

namespace {

constexpr const char* k_random_id = "11111111-2222-4333-8444-555555555555";

/// What torchrun gives this row's workers.
struct Expect {
  std::string backend;   ///< static or c10d
  std::string endpoint;  ///< static: MASTER_ADDR:MASTER_PORT; c10d: the rendezvous endpoint
  int nproc = 1;
  int group_rank = 0;
  int group_world_size = 1;
  std::string run_id = "none";
  int max_restarts = 0;
  std::string role = "default";
};

struct Row {
  std::string origin;
  std::vector<std::string> args;  ///< after "torchrun", the script and its arguments included
  std::map<std::string, std::string> env;
  Expect expect;
  std::vector<std::string> warnings = {};  ///< a distinctive part of each warning, in order
};

const std::vector<Row>& corpus() {
  static const std::vector<Row> rows = {
      {"pytorch docs torchrun: single-node multi-worker",
       {"--standalone", "--nnodes=1", "--nproc-per-node=4", "train.py", "--arg1"},
       {},
       {"c10d", "localhost:0", 4, 0, 1, k_random_id}},
      {"pytorch docs torchrun: stacked single-node",
       {"--rdzv-backend=c10d", "--rdzv-endpoint=localhost:0", "--nnodes=1", "--nproc-per-node=2",
        "train.py"},
       {},
       {"c10d", "localhost:0", 2}},
      {"pytorch docs torchrun: fault tolerant",
       {"--nnodes=4", "--nproc-per-node=8", "--max-restarts=3", "--rdzv-id=job42",
        "--rdzv-backend=c10d", "--rdzv-endpoint=node1.example.com:29400", "train.py"},
       {},
       {"c10d", "node1.example.com:29400", 8, 0, 4, "job42", 3}},
      {"pytorch docs torchrun: elastic 1:4, endpoint without a port",
       {"--nnodes=1:4", "--nproc-per-node=2", "--max-restarts=3", "--rdzv-id=job42",
        "--rdzv-backend=c10d", "--rdzv-endpoint=node1", "train.py"},
       {},
       {"c10d", "node1:29400", 2, 0, 4, "job42", 3}},
      {"pytorch docs torch.distributed.launch, node 1 of 2",
       {"--nproc_per_node=8", "--nnodes=2", "--node_rank=1", "--master_addr=192.168.1.1",
        "--master_port=1234", "train.py", "--local_rank=0"},
       {},
       {"static", "192.168.1.1:1234", 8, 1, 2}},
      {"pytorch/examples ddp-tutorial-series multinode",
       {"--nproc_per_node=4", "--nnodes=2", "--node_rank=0", "--rdzv_id=456", "--rdzv_backend=c10d",
        "--rdzv_endpoint=172.31.43.139:29603", "multinode_torchrun.py", "50", "10"},
       {},
       {"c10d", "172.31.43.139:29603", 4, 0, 2, "456"}},
      {"pytorch/examples ddp-tutorial-series multinode, second node (c10d ignores the rank)",
       {"--nproc_per_node=4", "--nnodes=2", "--node_rank=1", "--rdzv_id=456", "--rdzv_backend=c10d",
        "--rdzv_endpoint=172.31.43.139:29603", "multinode_torchrun.py", "50", "10"},
       {},
       {"c10d", "172.31.43.139:29603", 4, 1, 2, "456"},
       {"--node-rank '1': ignored, not used by the c10d backend"}},
      {"--standalone with a static port copied along",
       {"--standalone", "--master_addr=localhost", "--master_port=29501", "--nproc_per_node=2",
        "train.py"},
       {},
       {"c10d", "localhost:0", 2, 0, 1, k_random_id},
       {"--master-addr 'localhost': ignored", "--master-port '29501': ignored"}},
      {"pytorch/examples ddp-tutorial-series multigpu",
       {"--standalone", "--nproc_per_node=gpu", "multigpu_torchrun.py", "50", "10"},
       {},
       {"c10d", "localhost:0", 8, 0, 1, k_random_id}},
      {"torchtitan run_train.sh",
       {"--nproc_per_node=8", "--rdzv_backend", "c10d", "--rdzv_endpoint=localhost:0",
        "--local-ranks-filter", "0", "--role", "rank", "--tee", "3", "-m", "torchtitan.train",
        "--job.config_file", "llama3_8b.toml"},
       {},
       {"c10d", "localhost:0", 8, 0, 1, "none", 0, "rank"}},
      {"nanoGPT README, node 0 of 2 (an address torchrun takes as text)",
       {"--nproc_per_node=8", "--nnodes=2", "--node_rank=0", "--master_addr=123.456.123.456",
        "--master_port=1234", "train.py"},
       {},
       {"static", "123.456.123.456:1234", 8, 0, 2}},
      {"meta-llama README",
       {"--nproc_per_node", "1", "example_chat_completion.py", "--ckpt_dir", "llama-2-7b-chat/",
        "--max_seq_len", "512"},
       {},
       {"static", "127.0.0.1:29500", 1}},
      {"Megatron-LM examples (DISTRIBUTED_ARGS)",
       {"--nproc_per_node", "8", "--nnodes", "1", "--master_addr", "localhost", "--master_port",
        "6000", "--node_rank", "0", "pretrain_gpt.py", "--tensor-model-parallel-size", "2"},
       {},
       {"static", "localhost:6000", 8}},
      {"ultralytics yolov5 README (python -m torch.distributed.run)",
       {"--nproc_per_node", "2", "--master_port", "1", "train.py", "--batch", "64", "--device",
        "0,1"},
       {},
       {"static", "127.0.0.1:1", 2}},
      {"common single-node line with every static option spelled out",
       {"--nnodes=1", "--nproc_per_node=2", "--node_rank=0", "--master_addr=127.0.0.1",
        "--master_port=29500", "train.py"},
       {},
       {"static", "127.0.0.1:29500", 2}},
      {"torch 1.13 argparse prefixes",
       {"--nproc=2", "--max_r", "1", "--monitor_interval=1", "--start_method=fork", "--no_python",
        "/bin/true"},
       {},
       {"static", "127.0.0.1:29500", 2, 0, 1, "none", 1}},
      {"pytorch docs torchrun: logs",
       {"--log-dir=/tmp/logs", "-r", "3", "--local-ranks-filter", "0", "--nproc-per-node=2",
        "train.py"},
       {},
       {"static", "127.0.0.1:29500", 2}},
      {"c10d timeouts from issue threads",
       {"--nnodes=2", "--nproc_per_node=4", "--rdzv_backend=c10d", "--rdzv_endpoint=head:29400",
        "--rdzv_conf=join_timeout=900,read_timeout=300,is_host=0", "train.py"},
       {},
       {"c10d", "head:29400", 4, 0, 2}},
      {"static store timeout",
       {"--nnodes=2", "--node_rank=1", "--rdzv_conf", "timeout=3600", "train.py"},
       {},
       {"static", "127.0.0.1:29500", 1, 1, 2}},
      {"issue #17: shell quotes kept by a wrapper around --rdzv_conf",
       {"--nnodes=1:2", "--rdzv_backend=c10d", "--rdzv_endpoint=127.0.0.1:29400",
        "--rdzv_conf='join_timeout=5,last_call_timeout=1,timeout=5'", "train.py"},
       {},
       {"c10d", "127.0.0.1:29400", 1, 0, 2},
       {"removed the quotes", "'timeout=5': ignored, not used by the c10d backend"}},
      {"torch 2.4 Windows/libuv workaround and an unknown key",
       {"--standalone", "--rdzv_conf=use_libuv=False,my_key=1", "train.py"},
       {},
       {"c10d", "localhost:0", 1, 0, 1, k_random_id},
       {"'my_key=1': ignored, unknown key", "'use_libuv=False': ignored"}},
      {"torch >= 2.2 built-in logs specs",
       {"--logs_specs", "default", "train.py"},
       {},
       {"static", "127.0.0.1:29500"}},
      {"Slurm preemption signals (torch main), one name torchrun would skip",
       {"--signals-to-handle", "SIGTERM,SIGINT,SIGUSR1,SIGUSR2,SIGFOO", "train.py"},
       {},
       {"static", "127.0.0.1:29500"},
       {"'SIGFOO': ignored, unknown signal"}},
      {"torch 1.13 [run]: --standalone ignores the static options; an empty role is a role",
       {"--standalone", "--role", "", "--node_rank=-3", "--master_addr", "bad host", "train.py"},
       {},
       {"c10d", "localhost:0", 1, 0, 1, k_random_id, 0, ""},
       {"--node-rank '-3': ignored", "--master-addr 'bad host': ignored"}},
      {"torch 1.13 [run]: PET_START_METHOD is not checked against the choices",
       {"train.py"},
       {{"PET_START_METHOD", "thread"}},
       {"static", "127.0.0.1:29500"},
       {"PET_START_METHOD 'thread': ignored"}},
      {"Kubeflow PyTorchJob (training-operator), worker 1 of 2",
       {"/opt/mnist.py", "--epochs=1"},
       {{"PET_MASTER_ADDR", "pytorch-simple-master-0"},
        {"PET_MASTER_PORT", "23456"},
        {"PET_NNODES", "2"},
        {"PET_NODE_RANK", "1"},
        {"PET_NPROC_PER_NODE", "auto"},
        {"MASTER_ADDR", "pytorch-simple-master-0"},
        {"MASTER_PORT", "23456"},
        {"WORLD_SIZE", "2"},
        {"RANK", "1"},
        {"PYTHONUNBUFFERED", "1"}},
       {"static", "pytorch-simple-master-0:23456", 8, 1, 2}},
      {"Kubeflow PyTorchJob elastic policy",
       {"/workspace/examples/mnist.py"},
       {{"PET_NNODES", "1:3"},
        {"PET_RDZV_BACKEND", "c10d"},
        {"PET_RDZV_ENDPOINT", "elastic-example-worker-0:23456"},
        {"PET_NPROC_PER_NODE", "1"},
        {"PET_MAX_RESTARTS", "100"}},
       {"c10d", "elastic-example-worker-0:23456", 1, 0, 3, "none", 100}},
      {"Kubeflow Trainer v2 TrainJob torch runtime, node 0",
       {"train.py"},
       {{"PET_NNODES", "2"},
        {"PET_NPROC_PER_NODE", "4"},
        {"PET_NODE_RANK", "0"},
        {"PET_MASTER_ADDR", "job-node-0-0.job"},
        {"PET_MASTER_PORT", "29400"}},
       {"static", "job-node-0-0.job:29400", 4, 0, 2}},
  };
  return rows;
}

struct Resolved {
  config::LaunchConfig cfg;
  std::vector<util::Env> envs;  ///< by local rank
};

Result<Resolved> start(const Row& row) {
  util::Env env;
  for (const auto& [k, v] : row.env) {
    env.set(k, v);
  }
  auto parsed = cli::parse_args(row.args, env);
  if (!parsed) {
    return parsed.error();
  }
  config::HostFacts host;  // a typical 8-GPU node
  host.cpu_count = 16;
  host.gpu_count = 8;
  host.random_run_id = k_random_id;
  host.gpu_source = "NVML";
  auto cfg = config::resolve(*parsed, env, host, sched::Detected{});
  if (!cfg) {
    return cfg.error();
  }
  const auto& e = row.expect;  // the rendezvous' part: group rank and size
  const int n = cfg->group.nproc_per_node;
  const bool is_static = cfg->rdzv.rdzv_backend == config::RdzvBackend::static_;
  const int group_rank = is_static ? cfg->rdzv.node_rank : e.group_rank;
  const int nodes = is_static ? cfg->rdzv.nnodes.max : e.group_world_size;
  agent::RoundInfo round{is_static ? cfg->rdzv.master_addr : "<group rank 0>",
                         is_static ? cfg->rdzv.master_port : 0,
                         0,
                         cfg->group.max_restarts,
                         cfg->rdzv.rdzv_id,
                         true,
                         cfg->group.role};
  Resolved out{*cfg, {}};
  agent::NodePlace place{group_rank, nodes,          n,        group_rank * n,
                         nodes * n,  group_rank * n, nodes * n};
  for (const auto& ranks : agent::worker_ranks(place)) {
    out.envs.push_back(agent::worker_env(env, {}, round, ranks, {"/tmp/x/error.json", ""}));
  }
  return out;
}

/// The settings the app builds before starting (rdzv::parse_rdzv_settings and, for static, the
/// store timeout) must accept the row too.
void expect_rendezvous_settings(const config::LaunchConfig& cfg, const std::string& origin) {
  auto s = rdzv::parse_rdzv_settings(cfg.rdzv.rdzv_conf, cfg.rdzv.rdzv_id, cfg.rdzv.nnodes.min,
                                     cfg.rdzv.nnodes.max);
  EXPECT_TRUE(s) << origin << ": " << s.error().message;
  if (auto it = cfg.rdzv.rdzv_conf.find("timeout"); it != cfg.rdzv.rdzv_conf.end()) {
    EXPECT_TRUE(util::parse_int_in(it->second, 1, 1 << 30)) << origin;
  }
}

void expect_worker_env(const Row& row, const Resolved& r) {
  const auto& e = row.expect;
  ASSERT_EQ(static_cast<int>(r.envs.size()), e.nproc) << row.origin;
  const int world = e.nproc * e.group_world_size;
  for (int local = 0; local < e.nproc; ++local) {
    const auto& env = r.envs[static_cast<std::size_t>(local)];
    const int rank = e.group_rank * e.nproc + local;
    const std::map<std::string, std::string> want = {
        {"RANK", std::to_string(rank)},
        {"LOCAL_RANK", std::to_string(local)},
        {"GROUP_RANK", std::to_string(e.group_rank)},
        {"ROLE_RANK", std::to_string(rank)},
        {"ROLE_NAME", e.role},
        {"LOCAL_WORLD_SIZE", std::to_string(e.nproc)},
        {"WORLD_SIZE", std::to_string(world)},
        {"GROUP_WORLD_SIZE", std::to_string(e.group_world_size)},
        {"ROLE_WORLD_SIZE", std::to_string(world)},
        {"TORCHELASTIC_RUN_ID", e.run_id},
        {"TORCHELASTIC_MAX_RESTARTS", std::to_string(e.max_restarts)},
        {"TORCHELASTIC_RESTART_COUNT", "0"},
        {"TORCHELASTIC_USE_AGENT_STORE", "True"},
    };
    for (const auto& [name, value] : want) {
      EXPECT_EQ(env.get(name).value_or("<unset>"), value) << row.origin << ": " << name;
    }
    if (e.backend == "static") {
      const auto master =
          env.get("MASTER_ADDR").value_or("") + ":" + env.get("MASTER_PORT").value_or("");
      EXPECT_EQ(master, e.endpoint) << row.origin;
    }
  }
}

void expect_warnings(const Row& row, const config::LaunchConfig& cfg) {
  ASSERT_EQ(cfg.warnings.size(), row.warnings.size()) << row.origin;
  for (std::size_t i = 0; i < row.warnings.size(); ++i) {
    EXPECT_NE(cfg.warnings[i].find(row.warnings[i]), std::string::npos)
        << row.origin << ": " << cfg.warnings[i];
    EXPECT_EQ(cfg.warnings[i].find('\n'), std::string::npos) << row.origin;
  }
}

TEST(TorchrunCorpus, EveryLineStartsWithTorchrunsWorkerEnvironment) {
  for (const auto& row : corpus()) {
    auto r = start(row);
    ASSERT_TRUE(r) << row.origin << ": " << r.error().message;
    const auto& cfg = r->cfg;
    const auto& e = row.expect;
    EXPECT_EQ(config::to_string(cfg.rdzv.rdzv_backend), e.backend) << row.origin;
    if (e.backend == "c10d") {
      const auto ep =
          cfg.rdzv.rdzv_endpoint.host + ":" + std::to_string(cfg.rdzv.rdzv_endpoint.port);
      EXPECT_EQ(ep, e.endpoint) << row.origin;
      EXPECT_EQ(cfg.rdzv.nnodes.max, e.group_world_size) << row.origin;
    }
    expect_rendezvous_settings(cfg, row.origin);
    expect_worker_env(row, *r);
    expect_warnings(row, cfg);
  }
}

TEST(TorchrunCorpus, QuotedRdzvConfKeepsEveryKey) {
  auto conf = config::read_rdzv_conf("\"join_timeout=5,last_call_timeout=1\"", "c10d");
  ASSERT_TRUE(conf);
  EXPECT_EQ(conf->pairs.at("join_timeout"), "5");
  EXPECT_EQ(conf->pairs.at("last_call_timeout"), "1");
  ASSERT_EQ(conf->warnings.size(), 1u);
  // Only a pair of matching quotes around the whole text is removed.
  auto half = config::read_rdzv_conf("'join_timeout=5", "c10d");
  ASSERT_TRUE(half);
  EXPECT_EQ(half->pairs.count("join_timeout"), 0u);
  ASSERT_EQ(half->warnings.size(), 1u);
  EXPECT_NE(half->warnings[0].find("''join_timeout=5': ignored, unknown key"), std::string::npos)
      << half->warnings[0];
}

TEST(TorchrunCorpus, KnownKeysWithBadValuesAndMalformedItemsStayErrors) {
  // torchrun fails on these too (ValueError from int() or from the item split).
  EXPECT_FALSE(config::read_rdzv_conf("join_timeout", "c10d"));
  EXPECT_FALSE(config::read_rdzv_conf("'join_timeout=5,last_call_timeout'", "c10d"));
  auto bad = config::read_rdzv_conf("join_timeout=x", "c10d");
  ASSERT_TRUE(bad);
  EXPECT_FALSE(rdzv::parse_rdzv_settings(bad->pairs, "job", 1, 1));
}

TEST(TorchrunCorpus, KeysApplyPerBackend) {
  auto c10d = config::read_rdzv_conf("timeout=5,is_host=1,rank=0,store_type=TCP", "c10d");
  ASSERT_TRUE(c10d);
  EXPECT_EQ(c10d->pairs,
            (std::map<std::string, std::string>{{"is_host", "1"}, {"store_type", "TCP"}}));
  EXPECT_EQ(c10d->warnings.size(), 2u);  // rank, timeout
  auto stat = config::read_rdzv_conf("timeout=5,is_host=1,store_type=file", "static");
  ASSERT_TRUE(stat);
  EXPECT_EQ(stat->pairs, (std::map<std::string, std::string>{{"timeout", "5"}}));
  EXPECT_EQ(stat->warnings.size(), 2u);  // is_host, store_type=file
}

std::string read_doc(const std::string& name) {
  std::ifstream in(std::string(DDPRUN_TEST_SOURCE_DIR) + "/docs/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(TorchrunCorpus, HelpAndDocsListEveryRdzvConfKey) {
  const auto help = cli::render_help();
  const auto doc = read_doc("from-torchrun.md");
  ASSERT_FALSE(doc.empty());
  for (const auto& k : config::rdzv_conf_keys()) {
    const std::string key(k.key);
    EXPECT_NE(help.find(key), std::string::npos) << key;
    EXPECT_NE(doc.find("`" + key + "`"), std::string::npos) << key;
  }
}

}  // namespace
