// End-to-end tests of `ddprun status`: two c10d agents on loopback (127.0.0.2, 127.0.0.3) with
// sleeping workers, read while they run; and the one-line failures (no such run id,
// unreachable store, usage).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "support/subprocess.hpp"

using namespace ddprun::test;
using namespace std::chrono_literals;

namespace {

constexpr auto k_run_timeout = 30s;
constexpr auto k_agent_timeout = 60s;
constexpr const char* k_run_id = "st";
constexpr const char* k_worker_seconds = "8";

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

RunResult run_ddprun(const std::vector<std::string>& args) {
  std::vector<std::string> argv{ddprun_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  // The flags' environment defaults must not leak in from the caller.
  return run(argv,
             RunOptions{{},
                        {"PET_RDZV_ENDPOINT", "PET_RDZV_ID", "PET_RDZV_BACKEND", "PET_RDZV_CONF"},
                        "",
                        k_run_timeout});
}

/// A background agent killed (with its process group) unless it was waited for.
struct Agent {
  Background bg;
  bool reaped = false;
  ~Agent() {
    if (!reaped && bg.pid > 0) {
      ::kill(-bg.pid, SIGKILL);
      wait_for(bg.pid, 10s);
    }
  }
  int wait() {
    reaped = true;
    return wait_for(bg.pid, k_agent_timeout);
  }
};

std::vector<std::string> agent_argv(const std::string& endpoint, const std::string& addr,
                                    const std::string& nproc) {
  return {ddprun_bin(), "--nnodes",    "2",          "--rdzv_backend", "c10d", "--rdzv_endpoint",
          endpoint,     "--rdzv_id",   k_run_id,     "--local_addr",   addr,   "--nproc_per_node",
          nproc,        "--no_python", "/bin/sleep", k_worker_seconds};
}

std::vector<std::string> status_args(const std::string& endpoint, const std::string& extra) {
  std::vector<std::string> args{"status", "--rdzv_endpoint", endpoint, "--rdzv_id", k_run_id};
  if (!extra.empty()) {
    args.push_back(extra);
  }
  return args;
}

TEST(StatusE2E, ShowsBothNodesOfARunningRendezvous) {
  const std::string endpoint = "127.0.0.1:" + std::to_string(free_port());
  Agent a{start(agent_argv(endpoint, "127.0.0.2", "2"))};
  Agent b{start(agent_argv(endpoint, "127.0.0.3", "1"))};
  RunResult table;
  const bool complete = eventually(
      [&] {
        table = run_ddprun(status_args(endpoint, ""));
        return table.status == 0 && has(table.out, "complete");
      },
      k_run_timeout);
  ASSERT_TRUE(complete) << table.out << table.err << read_file(a.bg.err_path);
  EXPECT_TRUE(has(table.out, "rendezvous 'st' at 127.0.0.1:")) << table.out;
  EXPECT_TRUE(has(table.out, "round 0, complete, open")) << table.out;
  EXPECT_TRUE(has(table.out, "participants: 2 nodes, 3 workers")) << table.out;
  EXPECT_TRUE(has(table.out, "127.0.0.2")) << table.out;
  EXPECT_TRUE(has(table.out, "127.0.0.3")) << table.out;
  EXPECT_TRUE(has(table.out, "s ago")) << table.out;
  EXPECT_TRUE(has(table.out, "HEARTBEAT  LAST PROGRESS\n")) << table.out;

  auto js = run_ddprun(status_args(endpoint, "--json"));
  ASSERT_EQ(js.status, 0) << js.err;
  const auto j = nlohmann::json::parse(js.out);
  EXPECT_EQ(j["round"], 0);
  EXPECT_EQ(j["complete"], true);
  ASSERT_EQ(j["participants"].size(), 2U) << js.out;
  int workers = 0;
  for (const auto& p : j["participants"]) {
    workers += p["nproc"].get<int>();
    EXPECT_TRUE(p["addr"] == "127.0.0.2" || p["addr"] == "127.0.0.3") << p.dump();
    // A number once the agent's heartbeats carry its workers' progress, else null.
    ASSERT_TRUE(p.contains("last_progress_ms")) << p.dump();
    EXPECT_TRUE(p["last_progress_ms"].is_null() || p["last_progress_ms"].is_number()) << p.dump();
    EXPECT_EQ(p["last_progress_ms"].is_null(), p["progress_age_s"].is_null()) << p.dump();
  }
  EXPECT_EQ(workers, 3);
  EXPECT_EQ(a.wait(), 0) << read_file(a.bg.err_path);
  EXPECT_EQ(b.wait(), 0) << read_file(b.bg.err_path);
}

TEST(StatusE2E, UnknownRunIdIsOneLineAndExitOne) {
  const std::string endpoint = "127.0.0.1:" + std::to_string(free_port());
  const auto port = endpoint.substr(endpoint.find(':') + 1);
  Agent store{start({ddprun_bin(), "store", "serve", "--host", "127.0.0.1", "--port", port})};
  RunResult r;
  ASSERT_TRUE(eventually(
      [&] {
        r = run_ddprun({"status", "--rdzv-endpoint", endpoint, "--rdzv-id", "nope"});
        return !has(r.err, "cannot reach");
      },
      k_run_timeout))
      << r.err;
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "ddprun status: no rendezvous 'nope' at " + endpoint + " (is --rdzv_id right?)\n");
  ::kill(store.bg.pid, SIGTERM);
  EXPECT_EQ(store.wait(), 0);
}

TEST(StatusE2E, UnreachableStoreNamesTheEndpoint) {
  const std::string endpoint = "127.0.0.1:" + std::to_string(free_port());
  auto r = run_ddprun({"status", "--rdzv_endpoint", endpoint, "--timeout", "0.5"});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(has(r.err, "cannot reach the rendezvous store at " + endpoint)) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(StatusE2E, UsageErrorsExitTwo) {
  EXPECT_EQ(run_ddprun({"status"}).status, 2);
  EXPECT_EQ(run_ddprun({"status", "--rdzv_endpoint", "127.0.0.1:x"}).status, 2);
  EXPECT_EQ(run_ddprun({"status", "--rdzv_endpoint", "h:1", "--bogus"}).status, 2);
  auto etcd_v2 = run_ddprun({"status", "--rdzv_backend", "etcd-v2", "--rdzv_endpoint", "h:1"});
  EXPECT_EQ(etcd_v2.status, 2);
  EXPECT_EQ(etcd_v2.err,
            "ddprun status: --rdzv-backend 'etcd-v2': expected static, c10d or etcd-v3 (torchrun's "
            "etcd and etcd-v2 speak etcd's v2 API, which etcd 3.6 removed: use --rdzv-backend "
            "etcd-v3)\n");
  auto etcd = run_ddprun({"status", "--rdzv-backend", "etcd", "--rdzv_endpoint", "h:1"});
  EXPECT_EQ(etcd.status, 2);
  EXPECT_TRUE(has(etcd.err, "use --rdzv-backend etcd-v3")) << etcd.err;
  auto other = run_ddprun({"status", "--rdzv_backend", "zk", "--rdzv_endpoint", "h:1"});
  EXPECT_EQ(other.status, 2);
  EXPECT_EQ(other.err, "ddprun status: --rdzv-backend 'zk': expected static, c10d or etcd-v3\n");
  auto members = run_ddprun({"status", "--rdzv_backend", "etcd-v3", "--rdzv_endpoint", "ftp://e"});
  EXPECT_EQ(members.status, 2);
  EXPECT_TRUE(has(members.err, "--rdzv-endpoint 'ftp://e': expected etcd members")) << members.err;
  auto conf = run_ddprun(
      {"status", "--rdzv_backend", "etcd-v3", "--rdzv_endpoint", "e", "--rdzv_conf", "cert=c.pem"});
  EXPECT_EQ(conf.status, 2);
  EXPECT_TRUE(has(conf.err, "expected cert and key together")) << conf.err;
}

TEST(StatusE2E, StaticReadsTheStoreAtTheMasterPortByDefault) {
  auto r = run_ddprun(
      {"status", "--rdzv_backend", "static", "--rdzv_endpoint", "127.0.0.1", "--timeout", "0.5"});
  EXPECT_EQ(r.status, 1);
  // "cannot reach ..." unless something listens there; either way the line names the port.
  EXPECT_TRUE(has(r.err, " at 127.0.0.1:29500")) << r.err;
}

}  // namespace
