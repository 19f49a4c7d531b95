// Interoperability with real PyTorch 1.13 (/usr/bin/python3, python3-torch): torch's TCPStore
// client against our server, and our Client against torch's own TCPStore server.

#include "ddprun/store/client.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <sstream>

#include "store_fixture.hpp"
#include "support/pipe_subprocess.hpp"

namespace ddprun::store {
namespace {

using namespace std::chrono_literals;
using test::Subprocess;

constexpr auto k_python = "/usr/bin/python3";
constexpr auto k_script_timeout = 90s;
constexpr auto k_startup_timeout = 60s;

std::string script(const char* name) {
  const char* root = std::getenv("DDPRUN_SOURCE_DIR");
  return std::string(root != nullptr ? root : DDPRUN_TEST_SOURCE_DIR) + "/tests/component/store/" +
         name;
}

bool torch_available() {
  auto p = Subprocess::spawn({k_python, "-c", "import torch.distributed; print('torch-ok')"});
  return p && p->read_all(k_startup_timeout).find("torch-ok") != std::string::npos;
}

std::map<std::string, std::string> parse_results(const std::string& output) {
  std::map<std::string, std::string> results;
  std::istringstream in(output);
  std::string name;
  std::string value;
  while (in >> name && std::getline(in >> std::ws, value)) {
    results[name] = value;
  }
  return results;
}

/// torch_client.py (every op of a torch 1.13 TCPStore client) against 127.0.0.1:`port`; its
/// "name value" lines, or "" when it could not start.
std::string run_torch_client(std::uint16_t port) {
  auto py = Subprocess::spawn({k_python, script("torch_client.py"), std::to_string(port)});
  return py ? py->read_all(k_script_timeout) : std::string();
}

TEST(StoreTorch, Torch113ClientAgainstOurServer) {
  if (!torch_available()) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch.distributed";
  }
  test::ServerThread st;
  const auto port = st.start();
  const std::string output = run_torch_client(port);
  auto r = parse_results(output);
  ASSERT_EQ(r["done"], "1") << output;
  EXPECT_EQ(r["get"], "v1");
  EXPECT_EQ(r["add1"], "5");
  EXPECT_EQ(r["add2"], "8");
  EXPECT_EQ(r["add3"], "-2");
  EXPECT_EQ(r["cs_create"], "new");
  EXPECT_EQ(r["cs_missing"], "zzz");
  EXPECT_EQ(r["cs_match"], "newer");
  EXPECT_EQ(r["cs_mismatch"], "newer");
  EXPECT_EQ(r["num_keys"], "3");
  EXPECT_EQ(r["del1"], "True");
  EXPECT_EQ(r["del2"], "False");
  EXPECT_EQ(r["wait_existing"], "ok");
  EXPECT_EQ(r["binary"], "True");
  EXPECT_EQ(r["blocking_get"], "x");
  EXPECT_EQ(r["wait_timeout"], "raised");
  EXPECT_EQ(r["num_keys_end"], "4");  // cnt, cs, bin, late
  EXPECT_TRUE(st.eventually([](Server& s) { return s.connection_count() == 0; }));
}

// Workers cannot authenticate: against a store with a rendezvous token, torch 1.13 sees exactly
// the store it saw before (the protected rendezvous keys are not even counted).
TEST(StoreTorch, Torch113ClientAgainstServerWithToken) {
  if (!torch_available()) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch.distributed";
  }
  ServerOptions opts;
  opts.token = "job-secret";
  test::ServerThread st(opts);
  const auto port = st.start();
  ClientOptions agent;
  agent.port = port;
  agent.auth = AuthMode::token;
  agent.token = "job-secret";
  SyncClient owner(agent);
  ASSERT_TRUE(owner.set("ddprun/rdzv/job/state", "s"));
  const std::string output = run_torch_client(port);
  auto r = parse_results(output);
  ASSERT_EQ(r["done"], "1") << output;
  EXPECT_EQ(r["get"], "v1");
  EXPECT_EQ(r["cs_match"], "newer");
  EXPECT_EQ(r["num_keys"], "3");
  EXPECT_EQ(r["blocking_get"], "x");
  EXPECT_EQ(r["num_keys_end"], "4");
  EXPECT_EQ(*owner.get("ddprun/rdzv/job/state"), "s");
}

class TorchServer {
 public:
  bool start() {
    proc_ = Subprocess::spawn({k_python, script("torch_server.py")});
    if (!proc_) {
      return false;
    }
    while (auto line = proc_->read_line(k_startup_timeout)) {
      if (line->rfind("port ", 0) == 0) {
        port_ = static_cast<std::uint16_t>(std::stoi(line->substr(5)));
        return true;
      }
    }
    return false;
  }
  std::uint16_t port() const { return port_; }

 private:
  std::unique_ptr<Subprocess> proc_;
  std::uint16_t port_ = 0;
};

TEST(StoreTorch, OurD0ClientAgainstTorch113Server) {
  if (!torch_available()) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch.distributed";
  }
  TorchServer torch;
  ASSERT_TRUE(torch.start());
  ClientOptions opts;
  opts.port = torch.port();
  opts.dialect = Dialect::d0;
  opts.connect_timeout = 10s;
  opts.op_timeout = 10s;
  SyncClient c(opts);
  ASSERT_TRUE(c.connect());
  EXPECT_EQ(*c.get("/from_torch"), "hello");
  ASSERT_TRUE(c.set("/a", "1"));
  EXPECT_EQ(*c.get("/a"), "1");
  EXPECT_EQ(*c.add("/a", 41), 42);
  EXPECT_EQ(*c.compare_set("/missing", "zzz", "v"), "zzz");
  EXPECT_EQ(*c.compare_set("/cs", "", "v"), "v");
  EXPECT_TRUE(*c.check({"/a", "/cs"}));
  EXPECT_FALSE(*c.check({"/a", "/nope"}));
  EXPECT_EQ(*c.num_keys(), 3);  // /from_torch, /a, /cs
  EXPECT_TRUE(c.wait({"/a"}, 1s));
  const auto timed_out = c.wait({"/never"}, 300ms);
  ASSERT_FALSE(timed_out);
  EXPECT_EQ(timed_out.error().code, ErrorCode::timeout);
  ASSERT_TRUE(c.multi_set({{"/m1", "x"}, {"/m2", "y"}}));  // reconnected; D0: a run of SETs
  EXPECT_EQ(*c.multi_get({"/m1", "/m2"}), (std::vector<std::string>{"x", "y"}));
  EXPECT_TRUE(*c.delete_key("/a"));
  EXPECT_FALSE(*c.delete_key("/a"));
  EXPECT_EQ(*c.num_keys(), 4);
}

/// `ddprun store` without --dialect finds the real 1.x server's dialect, and every verb works.
TEST(StoreTorch, StoreCommandAgainstTorch113Server) {
  if (!torch_available()) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch.distributed";
  }
  TorchServer torch;
  ASSERT_TRUE(torch.start());
  const std::string ep = "127.0.0.1:" + std::to_string(torch.port());
  std::string out;
  std::string err;
  EXPECT_EQ(test::run({"get", "/from_torch", "--endpoint", ep}, &out, &err), 0) << err;
  EXPECT_EQ(out, "hello\n");
  EXPECT_EQ(test::run({"set", "/a", "1", "--endpoint", ep}, &out, &err), 0) << err;
  EXPECT_EQ(test::run({"get", "/a", "--endpoint", ep}, &out, &err), 0) << err;
  EXPECT_EQ(out, "1\n");
  EXPECT_EQ(test::run({"add", "/a", "41", "--endpoint", ep}, &out, &err), 0) << err;
  EXPECT_EQ(out, "42\n");
  EXPECT_EQ(test::run({"del", "/a", "--endpoint", ep}, &out, &err), 0) << err;
  EXPECT_EQ(out, "deleted\n");
  EXPECT_EQ(test::run({"del", "/a", "--endpoint", ep, "--dialect", "1.x-2.0"}, &out, &err), 0)
      << err;
  EXPECT_EQ(out, "absent\n");
  EXPECT_EQ(test::run({"keys", "--endpoint", ep}, &out, &err), 1);
  EXPECT_NE(err.find("does not support listing keys"), std::string::npos) << err;
  // Forced into the VALIDATE era, the 1.x server resets: an error naming both.
  EXPECT_EQ(test::run({"set", "/b", "1", "--endpoint", ep, "--dialect", "2.2+", "--timeout", "2"},
                      &out, &err),
            1);
  EXPECT_NE(err.find(ep + " in dialect D2"), std::string::npos) << err;
  EXPECT_EQ(test::run({"get", "/b", "--endpoint", ep}, &out, &err), 1);
}

std::unique_ptr<Subprocess> spawn_gloo_rank(std::uint16_t port, int rank) {
  return Subprocess::spawn(
      {"/usr/bin/env", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + std::to_string(port),
       "RANK=" + std::to_string(rank), "WORLD_SIZE=2", "TORCHELASTIC_USE_AGENT_STORE=True",
       "TORCHELASTIC_RESTART_COUNT=0", k_python, script("torch_gloo_worker.py")});
}

TEST(StoreTorch, GlooJobUsesOurServerAsAgentStore) {
  if (!torch_available()) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch.distributed";
  }
  test::ServerThread st;
  const auto port = st.start();
  auto rank0 = spawn_gloo_rank(port, 0);
  auto rank1 = spawn_gloo_rank(port, 1);
  ASSERT_TRUE(rank0 && rank1);
  const std::string out0 = rank0->read_all(k_script_timeout);
  const std::string out1 = rank1->read_all(k_script_timeout);
  for (const auto* out : {&out0, &out1}) {
    auto r = parse_results(*out);
    EXPECT_EQ(r["done"], "1") << *out;
    EXPECT_EQ(r["allreduce"], "3") << *out;
    EXPECT_EQ(r["group_allreduce"], "6") << *out;
  }
  const auto init_count = st.on_io([&st] { return st.server().state().value("init/"); });
  EXPECT_EQ(init_count, "2");
}

}  // namespace
}  // namespace ddprun::store
