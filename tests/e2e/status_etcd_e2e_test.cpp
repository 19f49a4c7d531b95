// End-to-end tests of `ddprun status --rdzv_backend etcd-v3` against a real 1-member etcd on
// loopback (tests/support/etcd_cluster.hpp): two agents on 127.0.0.2-3 read while they run
// (table and JSON; with and without the rendezvous token), and the one-line failures (no such
// run id, an unreachable or silent member, a CA that did not sign it). Skipped with the reason
// when Debian's etcd-server/etcd-client are not installed.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "multinode_agents.hpp"
#include "support/etcd_cluster.hpp"

using namespace ddprun::test;
using namespace ddprun::test::multinode;
using namespace std::chrono_literals;

namespace {

constexpr auto k_status_timeout = 30s;

/// `ddprun status` with the flags' environment defaults kept out.
RunResult status(const std::vector<std::string>& args) {
  std::vector<std::string> argv{ddprun_bin(), "status"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, RunOptions{{},
                              {"PET_RDZV_ENDPOINT", "PET_RDZV_ID", "PET_RDZV_BACKEND",
                               "PET_RDZV_CONF", "DDPRUN_RDZV_TOKEN"},
                              "",
                              k_status_timeout});
}

std::vector<std::string> etcd_status_args(const std::string& endpoints, const std::string& id,
                                          const std::vector<std::string>& extra = {}) {
  return concat({"--rdzv_backend", "etcd-v3", "--rdzv_endpoint", endpoints, "--rdzv_id", id},
                extra);
}

std::vector<std::string> agent_argv(const std::string& endpoints, const std::string& id, int k,
                                    const std::string& conf, const std::string& dir,
                                    const std::string& release) {
  return concat(
      concat(clean_ddprun(), {"--nnodes", "2", "--rdzv_backend", "etcd-v3", "--rdzv_endpoint",
                              endpoints, "--rdzv_id", id, "--local_addr", loopback(k),
                              "--nproc_per_node", "1", "--rdzv_conf", conf}),
      rounds(dir, release));
}

std::string token_file(const std::string& dir, const std::string& secret) {
  std::string path = dir + "/token";
  std::ofstream(path) << secret << "\n";
  EXPECT_EQ(chmod(path.c_str(), 0600), 0);
  return path;
}

std::size_t lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

class StatusEtcdE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    DDPRUN_SKIP_WITHOUT_ETCD();
    ASSERT_EQ(cluster_.start(), "");
  }

  /// Starts agent k of run `id` (its workers held until release_ exists).
  void start_agent(const std::string& id, const std::string& conf, int k) {
    if (release_.empty()) {
      release_ = make_temp_dir("ddprun-status-etcd-") + "/release";
    }
    dirs_.push_back(make_temp_dir("ddprun-status-etcd-"));
    agents_.start(agent_argv(cluster_.endpoints(), id, k, conf, dirs_.back(), release_));
  }

  /// Starts two agents of run `id` and waits until both run round 0's workers.
  void start_agents(const std::string& id, const std::string& conf) {
    for (int k = static_cast<int>(dirs_.size()); k < 2; ++k) {
      start_agent(id, conf, k);
    }
    ASSERT_TRUE(eventually(
        [&] {
          return last_start_has(dirs_[0], "world", "2") && last_start_has(dirs_[1], "world", "2");
        },
        k_event_timeout))
        << agents_.all_logs();
  }

  void finish_agents() {
    touch(release_);
    EXPECT_EQ(agents_.wait(0), 0) << agents_.all_logs();
    EXPECT_EQ(agents_.wait(1), 0) << agents_.all_logs();
  }

  EtcdCluster cluster_;
  Agents agents_;
  std::vector<std::string> dirs_;
  std::string release_;
};

}  // namespace

TEST_F(StatusEtcdE2E, ShowsBothNodesOfARunningRendezvousAsTableAndJson) {
  start_agents("st", k_fast_conf);
  const auto table = status(etcd_status_args(cluster_.endpoints(), "st"));
  ASSERT_EQ(table.status, 0) << table.err << agents_.all_logs();
  EXPECT_TRUE(contains(table.out, "rendezvous 'st' at etcd " + cluster_.endpoints() +
                                      " under /ddprun/rdzv/st/g1/\n"))
      << table.out;
  EXPECT_TRUE(contains(table.out, "round 0, complete, open")) << table.out;
  EXPECT_TRUE(contains(table.out, "participants: 2 nodes, 2 workers")) << table.out;
  EXPECT_TRUE(contains(table.out, loopback(0))) << table.out;
  EXPECT_TRUE(contains(table.out, loopback(1))) << table.out;
  EXPECT_TRUE(contains(table.out, "s ago")) << table.out;

  const auto js = status(etcd_status_args(cluster_.endpoints(), "st", {"--json"}));
  ASSERT_EQ(js.status, 0) << js.err;
  const auto j = nlohmann::json::parse(js.out);
  EXPECT_EQ(j["round"], 0);
  EXPECT_EQ(j["complete"], true);
  ASSERT_EQ(j["participants"].size(), 2U) << js.out;
  for (const auto& p : j["participants"]) {
    EXPECT_TRUE(p["addr"] == loopback(0) || p["addr"] == loopback(1)) << p.dump();
    EXPECT_TRUE(p["last_heartbeat_ms"].is_number()) << p.dump();
  }

  const auto nope = status(etcd_status_args(cluster_.endpoints(), "nope"));
  EXPECT_EQ(nope.status, 1);
  EXPECT_EQ(nope.err, "ddprun status: no rendezvous 'nope' at etcd " + cluster_.endpoints() +
                          " under /ddprun/rdzv/nope/ (is --rdzv_id right?)\n");
  const auto prefix = status(
      etcd_status_args(cluster_.endpoints(), "st", {"--rdzv_conf", "key_prefix=/elsewhere"}));
  EXPECT_EQ(prefix.status, 1);
  EXPECT_TRUE(contains(
      prefix.err, "no rendezvous 'st' at etcd " + cluster_.endpoints() + " under /elsewhere/st/"))
      << prefix.err;
  finish_agents();
}

// A joining round's nodes are those holding a slot: the slot counter is read by counting its
// keys (etcd keeps a counter as one key per add, rdzv::EtcdKv::add).
TEST_F(StatusEtcdE2E, AJoiningRoundListsTheNodeHoldingASlot) {
  start_agent("sj", k_fast_conf, 0);
  RunResult table;
  const bool listed = eventually(
      [&] {
        table = status(etcd_status_args(cluster_.endpoints(), "sj"));
        return table.status == 0 && contains(table.out, "participants: 1 nodes");
      },
      k_event_timeout);
  EXPECT_TRUE(listed) << table.out << table.err << agents_.all_logs();
  EXPECT_TRUE(contains(table.out, "round 0, joining, open")) << table.out;
  EXPECT_TRUE(contains(table.out, loopback(0))) << table.out;
  start_agents("sj", k_fast_conf);
  finish_agents();
}

TEST_F(StatusEtcdE2E, TheTokenChecksTheSignedValuesAndIsNeededToReadThem) {
  const auto dir = make_temp_dir("ddprun-status-etcd-token-");
  const auto good = token_file(dir, "s3cret");
  start_agents("tok", k_fast_conf + ",token_file=" + good);
  const auto table =
      status(etcd_status_args(cluster_.endpoints(), "tok", {"--rdzv_conf", "token_file=" + good}));
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_TRUE(contains(table.out, "participants: 2 nodes, 2 workers")) << table.out;

  const auto other = make_temp_dir("ddprun-status-etcd-token-");
  const auto wrong = status(etcd_status_args(
      cluster_.endpoints(), "tok", {"--rdzv_conf", "token_file=" + token_file(other, "x")}));
  EXPECT_EQ(wrong.status, 1);
  EXPECT_TRUE(contains(wrong.err, "is not signed with this job's token")) << wrong.err;
  EXPECT_EQ(lines(wrong.err), 1U) << wrong.err;

  const auto none = status(etcd_status_args(cluster_.endpoints(), "tok"));
  EXPECT_EQ(none.status, 1);
  EXPECT_TRUE(contains(none.err, "reading rendezvous 'tok' at etcd")) << none.err;
  EXPECT_TRUE(contains(none.err, "is signed: the agents use a rendezvous token")) << none.err;
  EXPECT_EQ(lines(none.err), 1U) << none.err;
  finish_agents();
}

TEST(StatusEtcdE2EUnreachable, ARefusedMemberIsOneLineNamingIt) {
  const std::string endpoints = "http://127.0.0.1:" + std::to_string(free_port());
  const auto r = status(etcd_status_args(endpoints, "x", {"--timeout", "1"}));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "ddprun status: cannot reach etcd at " + endpoints + ": ")) << r.err;
  EXPECT_EQ(lines(r.err), 1U) << r.err;
}

TEST(StatusEtcdE2EUnreachable, ASilentMemberIsAnErrorWithinTheTimeout) {
  // Accepts connections (the kernel's backlog) and never answers.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 16), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string endpoints = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = status(etcd_status_args(endpoints, "x", {"--timeout", "1"}));
  const auto took = std::chrono::steady_clock::now() - t0;
  ::close(fd);
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "cannot reach etcd at http://" + endpoints + ": ")) << r.err;
  EXPECT_EQ(lines(r.err), 1U) << r.err;
  EXPECT_GE(took, 900ms);
  EXPECT_LT(took, 30s) << "a hang: no timing is asserted beyond that";
}

TEST(StatusEtcdE2ETls, ACaThatDidNotSignTheMemberIsOneLineAndAMissingFileIsUsage) {
  DDPRUN_SKIP_WITHOUT_ETCD();
  EtcdCluster cluster(EtcdClusterOptions{1, true});
  ASSERT_EQ(cluster.start(), "");
  const std::string client = ",cert=" + cluster.client_cert() + ",key=" + cluster.client_key();
  const auto wrong = status(etcd_status_args(
      cluster.endpoints(), "x", {"--rdzv_conf", "cacert=" + cluster.other_ca_file() + client}));
  EXPECT_EQ(wrong.status, 1);
  EXPECT_TRUE(contains(wrong.err, "cannot reach etcd at " + cluster.endpoints())) << wrong.err;
  EXPECT_TRUE(contains(wrong.err, "certificate verify failed")) << wrong.err;
  EXPECT_EQ(lines(wrong.err), 1U) << wrong.err;

  const auto right = status(etcd_status_args(
      cluster.endpoints(), "x", {"--rdzv_conf", "cacert=" + cluster.ca_file() + client}));
  EXPECT_EQ(right.status, 1);
  EXPECT_TRUE(contains(right.err, "no rendezvous 'x' at etcd " + cluster.endpoints())) << right.err;

  const auto missing = status(etcd_status_args(
      cluster.endpoints(), "x", {"--rdzv_conf", "cacert=/nonexistent/ca.crt" + client}));
  EXPECT_EQ(missing.status, 2);
  EXPECT_TRUE(contains(missing.err, "/nonexistent/ca.crt")) << missing.err;
  EXPECT_EQ(lines(missing.err), 1U) << missing.err;
}
