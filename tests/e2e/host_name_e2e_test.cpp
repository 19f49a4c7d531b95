// End-to-end tests of a host whose own name does not resolve (issue 41 §2): containers and
// clusters without a DNS entry for the host. Each run is in private UTS and mount namespaces
// (root only) where the host is named `ddprun-nodns-<pid>` and /etc/hosts, /etc/resolv.conf and
// /etc/nsswitch.conf are the test's own: only localhost resolves, no DNS server is asked.

#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>

#include "support/subprocess.hpp"

using namespace ddprun::test;

namespace {

constexpr auto k_timeout = std::chrono::seconds(120);

class NoDnsHost {
 public:
  NoDnsHost()
      : dir_(make_temp_dir("ddprun-nodns-")), name_("ddprun-nodns-" + std::to_string(getpid())) {
    write(dir_ + "/hosts", "127.0.0.1 localhost\n::1 localhost ip6-localhost\n");
    write(dir_ + "/resolv.conf", "");
    write(dir_ + "/nsswitch.conf", "hosts: files dns\n");
  }

  const std::string& name() const { return name_; }

  /// argv run in fresh UTS and mount namespaces (and a fresh network namespace when asked,
  /// where only a down loopback exists) on this host with no name.
  std::vector<std::string> argv(const std::vector<std::string>& command,
                                bool own_net = false) const {
    std::vector<std::string> out{"/usr/bin/unshare", "--mount", "--uts", "--fork"};
    if (own_net) {
      out.insert(out.begin() + 1, "--net");
    }
    const std::string script =
        "hostname \"$0\" && mount --bind \"$1/hosts\" /etc/hosts && "
        "mount --bind \"$1/resolv.conf\" /etc/resolv.conf && "
        "mount --bind \"$1/nsswitch.conf\" /etc/nsswitch.conf && shift 2 && exec \"$@\"";
    out.insert(out.end(), {"/bin/sh", "-c", script, name_, dir_, "sh"});
    out.insert(out.end(), command.begin(), command.end());
    return out;
  }

 private:
  static void write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }
  std::string dir_;
  std::string name_;
};

#define DDPRUN_REQUIRE_ROOT()                                  \
  if (geteuid() != 0) {                                        \
    GTEST_SKIP() << "needs root for UTS and mount namespaces"; \
  }

std::vector<std::string> gloo_job(const std::vector<std::string>& launcher_args) {
  std::vector<std::string> argv{ddprun_bin()};
  argv.insert(argv.end(), launcher_args.begin(), launcher_args.end());
  argv.insert(argv.end(), {"--python", "/usr/bin/python3",
                           source_path("tests/support/workers/gloo_allreduce.py")});
  return argv;
}

}  // namespace

// The namespaces do what the tests below rely on: the name is there and does not resolve.
TEST(HostNameE2E, TheTestHostsNameDoesNotResolve) {
  DDPRUN_REQUIRE_ROOT();
  NoDnsHost host;
  auto r = run(host.argv({"/bin/sh", "-c", "hostname; getent hosts \"$(hostname)\"; echo rc=$?"}),
               RunOptions{{}, {}, "", k_timeout});
  EXPECT_EQ(r.out, host.name() + "\nrc=2\n") << r.err;
}

// torchrun 2.14 (and ddprun before) hang here: the workers look up MASTER_ADDR, the host's name.
TEST(HostNameE2E, AOneNodeJobUsesLoopback) {
  DDPRUN_REQUIRE_ROOT();
  if (!have_torch()) {
    GTEST_SKIP() << "needs torch in /usr/bin/python3";
  }
  NoDnsHost host;
  auto r = run(host.argv(gloo_job({"--standalone", "--nproc_per_node", "2"})),
               RunOptions{{}, {}, "", k_timeout});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("rank=0 world=2 allreduce=3.0"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("rank=1 world=2 allreduce=3.0"), std::string::npos) << r.out << r.err;
}

// Two agents over c10d on loopback: each publishes the address it reaches the endpoint from,
// and says why at INFO.
TEST(HostNameE2E, AMultiNodeAgentPublishesTheInterfaceTowardTheEndpoint) {
  DDPRUN_REQUIRE_ROOT();
  if (!have_torch()) {
    GTEST_SKIP() << "needs torch in /usr/bin/python3";
  }
  NoDnsHost host;
  const auto port = std::to_string(free_port());
  auto agent = gloo_job({"--nnodes", "2", "--nproc_per_node", "1", "--rdzv_backend", "c10d",
                         "--rdzv_endpoint", "127.0.0.1:" + port, "--rdzv_id", "nodns",
                         "--log-level", "INFO"});
  std::string both;
  for (const auto& a : agent) {
    both += "'" + a + "' ";
  }
  auto r = run(host.argv({"/bin/sh", "-c", both + "& " + both + "; s=$?; wait $! && exit $s"}),
               RunOptions{{}, {}, "", k_timeout});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("world=2 allreduce=3.0"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.err.find("this host's name '" + host.name() +
                       "' does not resolve here; publishing 127.0.0.1, the address of the "
                       "interface toward the rendezvous endpoint 127.0.0.1:" +
                       port),
            std::string::npos)
      << r.err;
}

// No interface reaches the endpoint (a network namespace with nothing up) and the name does
// not resolve: nothing could reach this agent, so it says so at once instead of waiting.
TEST(HostNameE2E, NoRouteAndNoNameFailsAtOnceNamingLocalAddr) {
  DDPRUN_REQUIRE_ROOT();
  NoDnsHost host;
  auto r = run(host.argv({ddprun_bin(), "--nnodes", "2", "--rdzv_backend", "c10d",
                          "--rdzv_endpoint", "10.255.254.1:29400", "--no_python", "true"},
                         true),
               RunOptions{{}, {}, "", k_timeout});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("this host's name '" + host.name() +
                       "' does not resolve here and no interface reaches the rendezvous "
                       "endpoint 10.255.254.1:29400: pass --local-addr"),
            std::string::npos)
      << r.err;
}
