// Rendezvous security and derived ports, end to end on loopback addresses:
//  - two c10d agents with the same token form the round; an agent with a wrong token, one
//    without a token and an unauthenticated `ddprun store set` on the state key are refused
//    with a clear error and change nothing; `ddprun status` needs the token too;
//  - a token file readable by others is refused before anything starts.

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "multinode_agents.hpp"

using namespace ddprun::test;
using namespace ddprun::test::multinode;

namespace {

constexpr auto k_refusal_timeout = std::chrono::seconds(30);

std::string write_token(const std::string& dir, const std::string& name, const std::string& text,
                        mode_t mode = 0600) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text << "\n";
  chmod(path.c_str(), mode);
  return path;
}

std::vector<std::string> agent(int i, int port, const std::string& conf) {
  return concat(concat(clean_ddprun(), c10d_flags("2", port, 1, loopback(i), conf)),
                {"--no_python", "/bin/true"});
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

  run({ddprun_bin(), "store", "set", "ddprun/rdzv/mnjob/state", "{}", "--endpoint", endpoint});
  EXPECT_TRUE(
      eventually([&] { return contains(agents.err(0), "on protected key"); }, k_event_timeout))
      << agents.err(0);
  auto status_without =
      run({ddprun_bin(), "status", "--rdzv_endpoint", endpoint, "--rdzv_id", "mnjob"});
  EXPECT_EQ(status_without.status, 1);
  EXPECT_TRUE(contains(status_without.err, "requires a token")) << status_without.err;
  auto status_with = run({ddprun_bin(), "status", "--rdzv_endpoint", endpoint, "--rdzv_id", "mnjob",
                          "--rdzv_conf", "token_file=" + good});
  EXPECT_EQ(status_with.status, 0) << status_with.err;

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

}  // namespace
