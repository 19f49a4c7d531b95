// Rendezvous security and derived ports, end to end on loopback addresses:
//  - two c10d agents with the same token form the round; an agent with a wrong token, one
//    without a token and a stranger's unauthenticated SET of the state key are refused with a
//    clear error and change nothing; `ddprun status` and `ddprun store` need the token too;
//  - a token file readable by others is refused before anything starts;
//  - under a (faked) Slurm step whose first derived port is taken by a foreign listener, node 0
//    hosts on the next candidate (naming the holder's pid) and node 1 finds it;
//  - a taken explicit --master_port is one error naming the port and the holder's pid.

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "multinode_agents.hpp"

using namespace ddprun::test;
using namespace ddprun::test::multinode;

namespace {

constexpr auto k_refusal_timeout = std::chrono::seconds(30);

std::string write_token(const std::string& dir, const std::string& name, const std::string& text,
                        mode_t mode = 0600) {
  std::string path = dir + "/" + name;
  std::ofstream(path) << text << "\n";
  chmod(path.c_str(), mode);
  return path;
}

std::vector<std::string> agent(int i, int port, const std::string& conf) {
  return concat(concat(clean_ddprun(), c10d_flags("2", port, 1, loopback(i), conf)),
                {"--no_python", "/bin/true"});
}

/// A stranger's SET of `key` (PyTorch's pre-2.1 wire format, which any TCPStore client
/// speaks: op 0, then key and value, each after a little-endian u64 length). The store must
/// close the connection (within 10 s).
void raw_set(int port, const std::string& key, const std::string& value) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval limit{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  ASSERT_EQ(connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  std::string frame(1, '\0');
  for (const auto* text : {&key, &value}) {
    const std::uint64_t n = text->size();
    frame.append(reinterpret_cast<const char*>(&n), sizeof n).append(*text);
  }
  ASSERT_EQ(send(fd, frame.data(), frame.size(), MSG_NOSIGNAL), static_cast<ssize_t>(frame.size()));
  char byte = 0;
  EXPECT_EQ(recv(fd, &byte, 1, 0), 0) << "the store kept a stranger's SET connection open";
  close(fd);
}

TEST(RdzvSecurityE2E, SameTokenJoinsWrongOrMissingTokenIsRefused) {
  const int port = free_port();
  const auto dir = make_temp_dir("ddprun-auth-");
  const auto good = write_token(dir, "good", "job-secret");
  const auto wrong = write_token(dir, "wrong", "not-the-secret");
  Agents agents;
  ASSERT_TRUE(start_host(agents, agent(0, port, "token_file=" + good))) << agents.all_logs();
  const std::string endpoint = "127.0.0.1:" + std::to_string(port);

  auto intruder = agents.start(agent(1, port, "token_file=" + wrong));
  EXPECT_GT(agents.wait(intruder, k_refusal_timeout), 0) << agents.all_logs();
  EXPECT_TRUE(
      contains(agents.err(intruder), "rendezvous at " + endpoint + " uses a different token"))
      << agents.err(intruder);
  auto tokenless = agents.start(agent(2, port, "join_timeout=60"));
  EXPECT_GT(agents.wait(tokenless, k_refusal_timeout), 0) << agents.all_logs();
  EXPECT_TRUE(contains(agents.err(tokenless), "rendezvous at " + endpoint + " requires a token; "))
      << agents.err(tokenless);

  raw_set(port, "ddprun/rdzv/mnjob/state", "{}");
  EXPECT_TRUE(
      eventually([&] { return contains(agents.err(0), "on protected key"); }, k_event_timeout))
      << agents.err(0);
  auto store_without =
      run({ddprun_bin(), "store", "set", "ddprun/rdzv/mnjob/state", "{}", "--endpoint", endpoint});
  EXPECT_EQ(store_without.status, 1);
  EXPECT_TRUE(contains(store_without.err, "requires a token")) << store_without.err;
  auto status_without =
      run({ddprun_bin(), "status", "--rdzv_endpoint", endpoint, "--rdzv_id", "mnjob"});
  EXPECT_EQ(status_without.status, 1);
  EXPECT_TRUE(contains(status_without.err, "requires a token")) << status_without.err;
  // The host writes the state only once it joins (after its first-round jitter), so the
  // authenticated status may first find no rendezvous yet.
  RunResult status_with;
  EXPECT_TRUE(eventually(
      [&] {
        status_with = run({ddprun_bin(), "status", "--rdzv_endpoint", endpoint, "--rdzv_id",
                           "mnjob", "--rdzv_conf", "token_file=" + good});
        return status_with.status == 0;
      },
      k_event_timeout))
      << status_with.err;

  auto peer = agents.start(agent(3, port, "token_file=" + good));
  EXPECT_EQ(agents.wait(0), 0) << agents.all_logs();
  EXPECT_EQ(agents.wait(peer), 0) << agents.all_logs();
  EXPECT_TRUE(contains(agents.err(0), "rendezvous authenticated with the token from --rdzv_conf"))
      << agents.err(0);
}

TEST(RdzvSecurityE2E, TokenFromTheEnvironmentAndUnsafeTokenFile) {
  const auto dir = make_temp_dir("ddprun-auth-");
  const auto open_file = write_token(dir, "open", "job-secret", 0644);
  auto r = run(concat(agent(0, free_port(), "token_file=" + open_file), {}));
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.err, "must not be readable by the group or others")) << r.err;

  const int port = free_port();
  Agents agents;
  auto with_env = [&](int i) {
    auto argv = agent(i, port, "join_timeout=60");
    argv.insert(argv.begin() + 3, "DDPRUN_RDZV_TOKEN=from-env");
    return argv;
  };
  ASSERT_TRUE(start_host(agents, with_env(0))) << agents.all_logs();
  agents.start(with_env(1));
  EXPECT_EQ(agents.wait(0), 0) << agents.all_logs();
  EXPECT_EQ(agents.wait(1), 0) << agents.all_logs();
  EXPECT_TRUE(contains(agents.err(1), "token from DDPRUN_RDZV_TOKEN")) << agents.err(1);
}

/// A listening socket that never answers: a foreign service on a port.
class ForeignListener {
 public:
  explicit ForeignListener(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && listen(fd_, 16) == 0;
  }
  ~ForeignListener() { close(fd_); }
  ForeignListener(const ForeignListener&) = delete;
  ForeignListener& operator=(const ForeignListener&) = delete;
  bool ok() const { return ok_; }

 private:
  int fd_;
  bool ok_ = false;
};

/// ddprun as node `rank` of a two-node Slurm step (job `job`, step 0) on 127.0.0.1/127.0.0.3.
std::vector<std::string> slurm_agent(int rank, int job, const std::string& dir) {
  return {"/usr/bin/env",
          "-i",
          "PATH=/usr/bin:/bin",
          "HOME=/root",
          "SLURM_JOB_ID=" + std::to_string(job),
          "SLURM_STEP_ID=0",
          "SLURM_STEP_NODELIST=127.0.0.1,127.0.0.3",
          "SLURM_STEP_NUM_NODES=2",
          "SLURM_STEP_TASKS_PER_NODE=1(x2)",
          "SLURM_NODEID=" + std::to_string(rank),
          ddprun_bin(),
          "--log_level",
          "INFO",
          "--launcher",
          "none",
          "--local_addr",
          rank == 0 ? "127.0.0.1" : "127.0.0.3",
          "--nproc_per_node",
          "1",
          "--no_python",
          worker("envdump.sh"),
          dir};
}

TEST(DerivedPortE2E, HostSkipsATakenCandidateAndTheOtherNodeFindsIt) {
  // Job ids whose first two candidate ports (29400 + id % 3000, +1) are free right now.
  int job = 0;
  std::unique_ptr<ForeignListener> foreign;
  for (int candidate = 1000 + getpid() % 1000; candidate < 4000 && !foreign; candidate += 7) {
    const int first = 29400 + candidate % 3000;
    auto probe_next = std::make_unique<ForeignListener>(first + 1);
    if (!probe_next->ok()) {
      continue;
    }
    probe_next.reset();
    auto listener = std::make_unique<ForeignListener>(first);
    if (listener->ok()) {
      foreign = std::move(listener);
      job = candidate;
    }
  }
  ASSERT_TRUE(foreign) << "no free pair of derived ports found";
  const int expected_port = 29400 + job % 3000 + 1;
  Agents agents;
  const auto dir0 = make_temp_dir("ddprun-port-");
  const auto dir1 = make_temp_dir("ddprun-port-");
  const auto node1 = agents.start(slurm_agent(1, job, dir1));
  const auto node0 = agents.start(slurm_agent(0, job, dir0));
  ASSERT_EQ(agents.wait(node1), 0) << agents.all_logs();
  ASSERT_EQ(agents.wait(node0), 0) << agents.all_logs();
  EXPECT_TRUE(contains(agents.err(node0), "derived rendezvous port " +
                                              std::to_string(expected_port - 1) + " is taken"))
      << agents.err(node0);
  EXPECT_TRUE(contains(agents.err(node0), "held by pid " + std::to_string(getpid())))
      << agents.err(node0);
  EXPECT_TRUE(
      contains(agents.err(node1), "answers on derived port " + std::to_string(expected_port)))
      << agents.err(node1);
  for (const auto& d : {dir0, dir1}) {
    for (const auto& e : std::filesystem::directory_iterator(d)) {
      auto env = parse_env_file(e.path().string());
      EXPECT_EQ(env["MASTER_PORT"], std::to_string(expected_port)) << e.path();
      EXPECT_EQ(env["WORLD_SIZE"], "2") << e.path();
    }
  }
}

TEST(DerivedPortE2E, NoFreeCandidateIsAClearError) {
  // Occupy all eight candidates of some job id (the first whose eight ports are all free).
  std::vector<std::unique_ptr<ForeignListener>> taken;
  int job = 0;
  for (int candidate = 2000 + getpid() % 1000; candidate < 5000 && job == 0; candidate += 11) {
    taken.clear();
    if (candidate % 3000 > 3000 - 8) {
      continue;  // keep the eight ports consecutive (no wrap) for the message below
    }
    for (int i = 0; i < 8; ++i) {
      auto l = std::make_unique<ForeignListener>(29400 + (candidate + i) % 3000);
      if (!l->ok()) {
        break;
      }
      taken.push_back(std::move(l));
    }
    job = taken.size() == 8 ? candidate : 0;
  }
  ASSERT_NE(job, 0) << "no job id with eight free derived ports found";
  const int first = 29400 + job % 3000;
  auto r = run(slurm_agent(0, job, make_temp_dir("ddprun-port-")));
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.err, "none of the job's derived rendezvous ports " +
                                  std::to_string(first) + "-" + std::to_string(first + 7) +
                                  " is free on 127.0.0.1"))
      << r.err;
}

/// A free port held by a ForeignListener of this test process.
std::pair<int, std::unique_ptr<ForeignListener>> taken_port() {
  for (int attempt = 0; attempt < 20; ++attempt) {
    const int port = free_port();
    auto listener = std::make_unique<ForeignListener>(port);
    if (listener->ok()) {
      return {port, std::move(listener)};
    }
  }
  return {0, nullptr};
}

TEST(ExplicitPortE2E, TakenMasterPortIsOneErrorNamingThePortAndItsHolder) {
  auto [port, holder] = taken_port();
  ASSERT_TRUE(holder) << "could not occupy a free port";
  const std::string held = "held by pid " + std::to_string(getpid());
  const std::vector<std::vector<std::string>> launches = {
      {"--nnodes", "2", "--node_rank", "0", "--master_port", std::to_string(port)},
      {"--nnodes", "1", "--master_port", std::to_string(port)}};
  for (const auto& flags : launches) {
    auto argv = concat(clean_ddprun(), flags);
    argv = concat(argv, {"--nproc_per_node", "1", "--no_python", "/bin/true"});
    auto r = run(argv);
    EXPECT_NE(r.status, 0) << r.err;
    EXPECT_TRUE(contains(r.err, "127.0.0.1:" + std::to_string(port) + ": ")) << r.err;
    EXPECT_TRUE(contains(r.err, held)) << r.err;
    EXPECT_FALSE(contains(r.err, "derived")) << r.err;
  }
}

TEST(ExplicitPortE2E, BadLogDirIsAUsageErrorEvenWhenThePortIsTaken) {
  // A usage error must not depend on whether a port is free: --log-dir is checked before the
  // workers' store binds (two bad-input tests once collided on the default port this way).
  auto [port, holder] = taken_port();
  ASSERT_TRUE(holder) << "could not occupy a free port";
  auto r = run(concat(clean_ddprun(),
                      {"--nnodes", "1", "--master_port", std::to_string(port), "--log-dir",
                       "/dev/null/logs", "--nproc_per_node", "1", "--no_python", "/bin/true"}));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "/dev/null/logs")) << r.err;
  EXPECT_FALSE(contains(r.err, std::to_string(port))) << r.err;
}

TEST(ExplicitPortE2E, C10dEndpointHeldByAnotherProgramIsNamedAtOnce) {
  auto [port, holder] = taken_port();
  ASSERT_TRUE(holder) << "could not occupy a free port";
  auto r =
      run(concat(clean_ddprun(), concat(c10d_flags("2", port, 1, loopback(0), "join_timeout=2"),
                                        {"--no_python", "/bin/true"})));
  // A listener that never answers is not a store: one error, exit 1, naming the holder (#24).
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "the rendezvous store endpoint 127.0.0.1:" + std::to_string(port) +
                                  " (held by pid " + std::to_string(getpid())))
      << r.err;
  EXPECT_TRUE(contains(r.err, "is not a TCPStore")) << r.err;
}

}  // namespace
