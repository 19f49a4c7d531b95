// Multi-node end-to-end tests over a real (virtual) network: two network namespaces joined by a
// veth pair, one agent in each, and the link of one node taken down mid-run. Root only; the
// private subnet 10.201.<n>.0/24 exists only inside the namespaces the test creates, and both
// namespaces are deleted at the end, also when an assertion fails.

#include <gtest/gtest.h>

#include <unistd.h>

#include "multinode_agents.hpp"

using namespace ddprun::test;
using namespace ddprun::test::multinode;

namespace {

constexpr const char* k_ip = "/usr/sbin/ip";
constexpr auto k_ip_timeout = std::chrono::seconds(10);
constexpr int k_netns_port = 29400;  ///< the store port; a fresh namespace has nothing listening

RunResult ip(const std::vector<std::string>& args) {
  return run(concat({k_ip}, args), RunOptions{{}, {}, "", k_ip_timeout});
}

/// Two namespaces `a` and `b` joined by a veth pair, addresses 10.201.<n>.1 and .2 (RAII).
class NetnsPair {
 public:
  NetnsPair() {
    static int counter = 0;
    const auto id = std::to_string(getpid()) + std::to_string(counter++);
    const auto subnet = "10.201." + std::to_string(1 + (getpid() + counter) % 250) + ".";
    ns_ = {"ddprun-a" + id, "ddprun-b" + id};
    dev_ = {"dpa" + id.substr(0, 10), "dpb" + id.substr(0, 10)};
    addr_ = {subnet + "1", subnet + "2"};
    why_not_ = create();
  }
  NetnsPair(const NetnsPair&) = delete;
  NetnsPair& operator=(const NetnsPair&) = delete;
  ~NetnsPair() {
    for (const auto& ns : created_) {
      ip({"netns", "del", ns});
    }
  }

  /// Empty when the namespaces are ready, else why they could not be made.
  const std::string& why_not() const { return why_not_; }
  const std::string& addr(int i) const { return addr_[static_cast<std::size_t>(i)]; }
  /// The argv prefix that runs a command inside namespace i.
  std::vector<std::string> exec_in(int i) const {
    return {k_ip, "netns", "exec", ns_[static_cast<std::size_t>(i)]};
  }
  bool set_link(int i, bool up) const {
    const auto n = static_cast<std::size_t>(i);
    return ip({"-n", ns_[n], "link", "set", dev_[n], up ? "up" : "down"}).status == 0;
  }

 private:
  std::string create() {
    for (const auto& ns : ns_) {
      if (auto r = ip({"netns", "add", ns}); r.status != 0) {
        return "ip netns add failed: " + r.err;
      }
      created_.push_back(ns);
    }
    auto r = ip({"link", "add", "name", dev_[0], "netns", ns_[0], "type", "veth", "peer", "name",
                 dev_[1], "netns", ns_[1]});
    if (r.status != 0) {
      return "ip link add veth failed: " + r.err;
    }
    for (std::size_t i = 0; i < 2; ++i) {
      for (const auto& cmd : std::vector<std::vector<std::string>>{
               {"-n", ns_[i], "addr", "add", addr_[i] + "/24", "dev", dev_[i]},
               {"-n", ns_[i], "link", "set", dev_[i], "up"},
               {"-n", ns_[i], "link", "set", "lo", "up"}}) {
        if (auto c = ip(cmd); c.status != 0) {
          return "ip " + cmd[2] + " in " + ns_[i] + " failed: " + c.err;
        }
      }
    }
    return "";
  }

  std::vector<std::string> ns_;
  std::vector<std::string> dev_;
  std::vector<std::string> addr_;
  std::vector<std::string> created_;
  std::string why_not_;
};

/// Skips the test unless it can create network namespaces.
#define DDPRUN_REQUIRE_NETNS(pair)                                        \
  if (geteuid() != 0) {                                                   \
    GTEST_SKIP() << "needs root to create network namespaces";            \
  }                                                                       \
  NetnsPair pair;                                                         \
  if (!pair.why_not().empty()) {                                          \
    GTEST_SKIP() << "network namespaces unavailable: " << pair.why_not(); \
  }

/// Starts the store host in namespace 0 and a peer in namespace 1, both running rounds.sh, and
/// waits until both workers run in a round of two.
void start_pair(Agents& agents, const NetnsPair& net, const std::string& nnodes,
                const std::vector<std::string>& dirs, const std::string& release) {
  const int port = k_netns_port;
  const std::string conf =
      "join_timeout=4,last_call_timeout=1,keep_alive_interval=1,keep_alive_max_attempt=2";
  for (int i = 0; i < 2; ++i) {
    auto argv = concat(concat(concat(net.exec_in(i), clean_ddprun()),
                              c10d_flags(nnodes, port, 1, net.addr(i), conf, net.addr(0))),
                       rounds(dirs[static_cast<std::size_t>(i)], release));
    if (i == 0) {
      ASSERT_TRUE(start_host(agents, argv)) << agents.all_logs();
    } else {
      agents.start(argv);
    }
  }
  ASSERT_TRUE(eventually(
      [&] {
        return last_start_has(dirs[0], "world", "2") && last_start_has(dirs[1], "world", "2");
      },
      k_event_timeout))
      << agents.all_logs();
}

}  // namespace

TEST(MultinodeNetnsE2E, LinkDownWithoutRoomToShrinkFailsNamingTheLostNode) {
  DDPRUN_REQUIRE_NETNS(net);
  std::vector<std::string> dirs{make_temp_dir("ddprun-mn-ns-"), make_temp_dir("ddprun-mn-ns-")};
  Agents agents;
  start_pair(agents, net, "2", dirs, dirs[0] + "/release");
  if (HasFatalFailure()) {
    return;
  }
  ASSERT_TRUE(net.set_link(1, false));
  EXPECT_EQ(agents.wait(0, k_event_timeout), 1) << agents.all_logs();
  EXPECT_TRUE(contains(agents.err(0), "expected 2 nodes, 1 arrived (" + net.addr(0) +
                                          "); lost since the previous round: " + net.addr(1)))
      << agents.err(0);
}

TEST(MultinodeNetnsE2E, LinkDownWithRoomToShrinkReformsAlone) {
  DDPRUN_REQUIRE_NETNS(net);
  std::vector<std::string> dirs{make_temp_dir("ddprun-mn-ns-"), make_temp_dir("ddprun-mn-ns-")};
  const std::string release = dirs[0] + "/release";
  Agents agents;
  start_pair(agents, net, "1:2", dirs, release);
  if (HasFatalFailure()) {
    return;
  }
  ASSERT_TRUE(net.set_link(1, false));
  ASSERT_TRUE(eventually([&] { return last_start_has(dirs[0], "world", "1"); }, k_event_timeout))
      << agents.all_logs();
  EXPECT_TRUE(contains(agents.err(0), "lost " + net.addr(1))) << agents.err(0);
  // The cut-off agent's socket to the store cannot close while the link is down; stop it and
  // bring the link back so the survivor sees that connection end instead of lingering for it.
  agents.signal(1, SIGKILL);
  agents.wait(1, k_event_timeout);
  ASSERT_TRUE(net.set_link(1, true));
  touch(release);
  EXPECT_EQ(agents.wait(0), 0) << agents.all_logs();
  EXPECT_EQ(starts(dirs[0]).back()["restart"], "0") << "a lost node is not a failure restart";
}
