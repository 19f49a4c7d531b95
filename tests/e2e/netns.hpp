#pragma once
// Two network namespaces joined by a veth pair, for multi-node tests over a real (virtual)
// network: one agent in each, a link taken down mid-run. Root only; the private subnet
// 10.201.<n>.0/24 exists only inside the namespaces the test creates, and both namespaces are
// deleted when the pair goes out of scope, also when an assertion fails.

#include <gtest/gtest.h>

#include <unistd.h>

#include <string>
#include <vector>

#include "e2e/multinode_agents.hpp"

namespace ddprun::test::multinode {

inline constexpr const char* k_ip = "/usr/sbin/ip";
inline constexpr auto k_ip_timeout = std::chrono::seconds(10);
/// The store port; a fresh namespace has nothing listening on it.
inline constexpr int k_netns_port = 29400;

inline RunResult ip(const std::vector<std::string>& args) {
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

/// Starts the store host in namespace 0 and a peer in namespace 1 (c10d, `nnodes`, `conf`),
/// both running rounds.sh into dirs[i], and waits until both workers run in a round of two.
/// `tags` (one per agent, optional) mark each agent's processes for processes_with_env.
inline void start_pair(Agents& agents, const NetnsPair& net, const std::string& nnodes,
                       const std::string& conf, const std::vector<std::string>& dirs,
                       const std::string& release, const std::vector<std::string>& tags = {}) {
  for (int i = 0; i < 2; ++i) {
    const auto k = static_cast<std::size_t>(i);
    auto argv =
        concat(concat(concat(net.exec_in(i), tags.empty() ? clean_ddprun() : clean_ddprun(tags[k])),
                      c10d_flags(nnodes, k_netns_port, 1, net.addr(i), conf, net.addr(0))),
               rounds(dirs[k], release));
    if (i == 0) {
      ASSERT_TRUE(start_host(agents, argv)) << agents.all_logs();
    } else {
      agents.start(argv);
    }
  }
  ASSERT_TRUE(all_started_with_world(dirs, "2")) << agents.all_logs();
}

/// Skips the test unless it can create network namespaces.
#define DDPRUN_REQUIRE_NETNS(pair)                                          \
  if (geteuid() != 0) {                                                     \
    GTEST_SKIP() << "needs root to create network namespaces";              \
  }                                                                         \
  NetnsPair pair;                                                           \
  if (!(pair).why_not().empty()) {                                          \
    GTEST_SKIP() << "network namespaces unavailable: " << (pair).why_not(); \
  }

}  // namespace ddprun::test::multinode
