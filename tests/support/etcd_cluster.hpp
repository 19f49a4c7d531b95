#pragma once
// Test helper: a real etcd cluster on loopback (Debian's etcd-server). Each member gets two
// free ports on 127.0.0.1 and a data directory under one temp directory; start() waits, in a
// bounded loop, until `etcdctl endpoint health` passes; the destructor SIGKILLs every member,
// reaps it and removes the directory. Members die with the test process too (PDEATHSIG), so a
// crashed test leaves no etcd behind.

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "support/subprocess.hpp"

namespace ddprun::test {

struct EtcdClusterOptions {
  int members = 1;
  /// Client URLs on https:// with certificates made by `openssl` (tls_dir()), and clients
  /// required to present a certificate signed by the test CA.
  bool tls = false;
};

class EtcdCluster {
 public:
  /// Why the etcd tests cannot run here ("" when they can): etcd or etcdctl missing.
  static std::string unavailable_reason();

  explicit EtcdCluster(EtcdClusterOptions options = {});
  ~EtcdCluster();
  EtcdCluster(const EtcdCluster&) = delete;
  EtcdCluster& operator=(const EtcdCluster&) = delete;

  /// Starts every member and waits until all are healthy, at most `timeout`. "" on success,
  /// else what went wrong (with the tail of a member's log).
  std::string start(std::chrono::milliseconds timeout = std::chrono::seconds(20));

  /// "http://127.0.0.1:p0,http://127.0.0.1:p1,..." (https:// with tls).
  std::string endpoints() const;
  std::string endpoint(std::size_t member) const;
  int client_port(std::size_t member) const { return members_.at(member).client_port; }
  /// SIGKILL one member and reap it.
  void kill_member(std::size_t member);
  /// SIGSTOP (`paused`) or SIGCONT one member: a stopped member keeps its sockets, so calls to
  /// it wait instead of being refused, and it takes part in the cluster again when continued.
  void pause_member(std::size_t member, bool paused);
  /// Runs etcdctl against the cluster (TLS flags added); "" on success, else its stderr.
  std::string etcdctl(const std::vector<std::string>& args) const;
  /// Writes `key` (a new revision, as another user of a shared etcd does) and compacts the
  /// history up to the revision that write made: every watch starting before it is cancelled.
  /// "" on success, else what failed.
  std::string write_and_compact(const std::string& key) const;
  /// Adds `user` (read-write on every key under "/") and root, then turns authentication on.
  std::string enable_auth(const std::string& user, const std::string& password);

  // --- TLS files (tls only) ---
  std::string ca_file() const { return dir_ + "/tls/ca.crt"; }
  std::string client_cert() const { return dir_ + "/tls/client.crt"; }
  std::string client_key() const { return dir_ + "/tls/client.key"; }
  /// A CA that signed nothing of this cluster's.
  std::string other_ca_file() const { return dir_ + "/tls/other-ca.crt"; }

 private:
  struct Member {
    int client_port = 0;
    int peer_port = 0;
    pid_t pid = -1;
  };
  std::string make_certificates();
  std::vector<std::string> member_argv(std::size_t member) const;
  bool healthy() const;
  RunResult run_etcdctl(const std::vector<std::string>& args) const;

  EtcdClusterOptions options_;
  std::string dir_;
  std::vector<Member> members_;
  std::string root_password_;
};

}  // namespace ddprun::test

/// Skips the current test, saying why, when Debian's etcd-server/etcd-client are missing.
#define DDPRUN_SKIP_WITHOUT_ETCD()                                                    \
  do {                                                                                \
    if (auto why = ::ddprun::test::EtcdCluster::unavailable_reason(); !why.empty()) { \
      GTEST_SKIP() << why;                                                            \
    }                                                                                 \
  } while (false)
