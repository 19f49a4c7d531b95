#include "support/etcd_cluster.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "support/subprocess.hpp"

namespace ddprun::test {
namespace {

constexpr const char* k_etcd = "/usr/bin/etcd";
constexpr const char* k_etcdctl = "/usr/bin/etcdctl";

// Fast elections so that a killed leader is replaced in well under a second, and a minimum
// lease TTL of 1 s (etcd allows 1.5 election timeouts).
constexpr const char* k_heartbeat_ms = "50";
constexpr const char* k_election_ms = "500";

bool executable(const char* path) { return access(path, X_OK) == 0; }

/// fork/exec with stdout+stderr to `log`, in its own process group, killed with its parent.
pid_t spawn_member(const std::vector<std::string>& argv, const std::string& log) {
  auto cargv = exec_args(argv);
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) {
      _exit(126);
    }
    dup2(fd, 1);
    dup2(fd, 2);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  close(fd);
  return pid;
}

std::string tail(const std::string& text, std::size_t chars) {
  return text.size() <= chars ? text : text.substr(text.size() - chars);
}

}  // namespace

std::string EtcdCluster::unavailable_reason() {
  if (!executable(k_etcd)) {
    return std::string(k_etcd) + " is not installed (Debian package etcd-server)";
  }
  if (!executable(k_etcdctl)) {
    return std::string(k_etcdctl) + " is not installed (Debian package etcd-client)";
  }
  return "";
}

EtcdCluster::EtcdCluster(EtcdClusterOptions options)
    : options_(options), dir_(make_temp_dir("ddprun-etcd-")), root_password_("root-pw") {
  for (int i = 0; i < options_.members; ++i) {
    members_.push_back(Member{free_port(), free_port(), -1});
  }
}

EtcdCluster::~EtcdCluster() {
  for (std::size_t i = 0; i < members_.size(); ++i) {
    kill_member(i);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::string EtcdCluster::endpoint(std::size_t member) const {
  return std::string(options_.tls ? "https" : "http") +
         "://127.0.0.1:" + std::to_string(members_.at(member).client_port);
}

std::string EtcdCluster::endpoints() const {
  std::string out;
  for (std::size_t i = 0; i < members_.size(); ++i) {
    out += (i > 0 ? "," : "") + endpoint(i);
  }
  return out;
}

std::vector<std::string> EtcdCluster::member_argv(std::size_t member) const {
  std::string cluster;
  for (std::size_t i = 0; i < members_.size(); ++i) {
    cluster += (i > 0 ? "," : "") + std::string("m") + std::to_string(i) +
               "=http://127.0.0.1:" + std::to_string(members_[i].peer_port);
  }
  const std::string name = "m" + std::to_string(member);
  const std::string peer = "http://127.0.0.1:" + std::to_string(members_[member].peer_port);
  std::vector<std::string> argv = {k_etcd,
                                   "--name",
                                   name,
                                   "--data-dir",
                                   dir_ + "/" + name,
                                   "--listen-client-urls",
                                   endpoint(member),
                                   "--advertise-client-urls",
                                   endpoint(member),
                                   "--listen-peer-urls",
                                   peer,
                                   "--initial-advertise-peer-urls",
                                   peer,
                                   "--initial-cluster",
                                   cluster,
                                   "--initial-cluster-state",
                                   "new",
                                   "--initial-cluster-token",
                                   "ddprun-test",
                                   "--heartbeat-interval",
                                   k_heartbeat_ms,
                                   "--election-timeout",
                                   k_election_ms};
  if (options_.tls) {
    argv.insert(argv.end(),
                {"--cert-file", dir_ + "/tls/server.crt", "--key-file", dir_ + "/tls/server.key",
                 "--trusted-ca-file", ca_file(), "--client-cert-auth"});
  }
  return argv;
}

std::string EtcdCluster::make_certificates() {
  const std::string tls = dir_ + "/tls";
  std::filesystem::create_directories(tls);
  // EC keys: a few milliseconds each. The server certificate names 127.0.0.1 (the client
  // verifies the host), the client's is for client auth.
  const std::string script =
      "set -e; cd '" + tls +
      "'\n"
      "key='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes'\n"
      "openssl req -x509 $key -keyout ca.key -out ca.crt -days 1 -subj /CN=ddprun-test-ca\n"
      "openssl req -x509 $key -keyout other-ca.key -out other-ca.crt -days 1 -subj /CN=other\n"
      "printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth,clientAuth\\n' > srv.ext\n"
      "printf 'extendedKeyUsage=clientAuth\\n' > cli.ext\n"
      "openssl req $key -keyout server.key -out server.csr -subj /CN=127.0.0.1\n"
      "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 "
      "-extfile srv.ext -out server.crt\n"
      "openssl req $key -keyout client.key -out client.csr -subj /CN=ddprun-client\n"
      "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 "
      "-extfile cli.ext -out client.crt\n";
  auto r = run({"/bin/sh", "-c", script}, RunOptions{{}, {}, {}, std::chrono::seconds(30)});
  return r.status == 0 ? "" : "openssl failed: " + tail(r.err, 400);
}

RunResult EtcdCluster::run_etcdctl(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {k_etcdctl, "--endpoints",       endpoints(), "--dial-timeout",
                                   "1s",      "--command-timeout", "3s"};
  if (options_.tls) {
    argv.insert(argv.end(),
                {"--cacert", ca_file(), "--cert", client_cert(), "--key", client_key()});
  }
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions o;
  o.env_add["ETCDCTL_API"] = "3";
  o.timeout = std::chrono::seconds(10);
  return run(argv, o);
}

std::string EtcdCluster::etcdctl(const std::vector<std::string>& args) const {
  auto r = run_etcdctl(args);
  return r.status == 0 ? "" : "etcdctl " + args.front() + ": " + tail(r.err + r.out, 400);
}

std::string EtcdCluster::write_and_compact(const std::string& key) const {
  auto r = run_etcdctl({"put", key, "x", "-w", "json"});
  // {"header":{"cluster_id":...,"member_id":...,"revision":N,"raft_term":...}}
  const std::string field = "\"revision\":";
  const auto at = r.out.find(field);
  if (r.status != 0 || at == std::string::npos) {
    return "etcdctl put: " + tail(r.err + r.out, 400);
  }
  return etcdctl({"compact", std::to_string(std::stoll(r.out.substr(at + field.size())))});
}

bool EtcdCluster::healthy() const { return etcdctl({"endpoint", "health"}).empty(); }

std::string EtcdCluster::start(std::chrono::milliseconds timeout) {
  if (dir_.empty()) {
    return "cannot make a temp directory";
  }
  if (options_.tls) {
    if (auto why = make_certificates(); !why.empty()) {
      return why;
    }
  }
  for (std::size_t i = 0; i < members_.size(); ++i) {
    members_[i].pid = spawn_member(member_argv(i), dir_ + "/m" + std::to_string(i) + ".log");
  }
  if (eventually([&] { return healthy(); }, timeout)) {
    return "";
  }
  return "etcd not healthy after " + std::to_string(timeout.count()) +
         " ms; m0.log: " + tail(read_file(dir_ + "/m0.log"), 600);
}

void EtcdCluster::kill_member(std::size_t member) {
  Member& m = members_.at(member);
  if (m.pid > 0) {
    kill(-m.pid, SIGKILL);
    kill(m.pid, SIGKILL);
    int status = 0;
    waitpid(m.pid, &status, 0);
    m.pid = -1;
  }
}

void EtcdCluster::pause_member(std::size_t member, bool paused) {
  const Member& m = members_.at(member);
  if (m.pid > 0) {
    kill(m.pid, paused ? SIGSTOP : SIGCONT);
  }
}

std::string EtcdCluster::enable_auth(const std::string& user, const std::string& password) {
  const std::vector<std::vector<std::string>> steps = {
      {"user", "add", "root:" + root_password_},
      {"user", "add", user + ":" + password},
      {"role", "add", "rw"},
      {"role", "grant-permission", "rw", "--prefix=true", "readwrite", "/"},
      {"user", "grant-role", user, "rw"},
      {"auth", "enable"},
  };
  for (const auto& step : steps) {
    if (auto why = etcdctl(step); !why.empty()) {
      return why;
    }
  }
  return "";
}

}  // namespace ddprun::test
