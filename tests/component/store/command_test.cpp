// `ddprun store` subcommands against a loopback server; usage errors exit 2.

#include "ddprun/store/command.hpp"

#include "ddprun/store/client.hpp"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "store_fixture.hpp"
#include "support/ports.hpp"

namespace ddprun::store {
namespace {

using test::Emulated;
using test::run;

/// The in-process server's warnings (connections it closes) stay out of the captured stdout.
class QuietServer {
 public:
  QuietServer() : level_(spdlog::get_level()) { spdlog::set_level(spdlog::level::err); }
  ~QuietServer() { spdlog::set_level(level_); }
  QuietServer(const QuietServer&) = delete;
  QuietServer& operator=(const QuietServer&) = delete;

 private:
  spdlog::level::level_enum level_;
};

TEST(StoreCommand, ClientVerbsAgainstServer) {
  test::ServerThread st;
  const std::string ep = "127.0.0.1:" + std::to_string(st.start());
  std::string out;
  EXPECT_EQ(run({"set", "/k", "v1", "--endpoint", ep}), 0);
  EXPECT_EQ(run({"store", "get", "/k", "--endpoint", ep}, &out), 0);
  EXPECT_EQ(out, "v1\n");
  EXPECT_EQ(run({"add", "/n", "5", "--endpoint", ep}, &out), 0);
  EXPECT_EQ(out, "5\n");
  EXPECT_EQ(run({"keys", "--endpoint", ep}, &out), 0);
  EXPECT_EQ(out, "/k\n/n\n");
  EXPECT_EQ(run({"del", "/k", "--endpoint", ep}, &out), 0);
  EXPECT_EQ(out, "deleted\n");
  std::string err;
  EXPECT_EQ(run({"get", "/k", "--endpoint", ep}, &out, &err), 1);
  EXPECT_EQ(err, "ddprun store: key '/k' not found\n");
}

/// Every verb, without --dialect, against ddprun's server and the PyTorch servers it emulates
/// (issue #17: VALIDATE-era servers closed or ignored 1.x-dialect verbs, and `set` exited 0
/// having stored nothing). The libuv server from before PING costs a probe timeout per verb:
/// dialect_test covers it through the client.
TEST(StoreCommand, EveryVerbAgainstEveryServerKind) {
  const QuietServer quiet;
  for (const auto kind :
       {Emulated::ours, Emulated::torch_1x, Emulated::torch_2_1, Emulated::torch_2x_classic,
        Emulated::torch_2x_libuv, Emulated::torch_2_2_classic}) {
    SCOPED_TRACE("server kind " + std::to_string(static_cast<int>(kind)));
    test::ServerThread st(test::emulating(kind));
    const std::string ep = "127.0.0.1:" + std::to_string(st.start());
    const bool validate_era = kind != Emulated::torch_1x && kind != Emulated::torch_2_1;
    std::string out;
    std::string err;
    EXPECT_EQ(run({"set", "/k", "v1", "--endpoint", ep}, &out, &err), 0) << err;
    EXPECT_EQ(st.on_io([&st] { return st.server().state().value("/k"); }), "v1");
    EXPECT_EQ(run({"get", "/k", "--endpoint", ep}, &out, &err), 0) << err;
    EXPECT_EQ(out, "v1\n");
    EXPECT_EQ(run({"add", "/n", "5", "--endpoint", ep}, &out, &err), 0) << err;
    EXPECT_EQ(out, "5\n");
    EXPECT_EQ(run({"keys", "--endpoint", ep}, &out, &err), validate_era ? 0 : 1) << err;
    if (validate_era) {
      EXPECT_EQ(out, "/k\n/n\n");
    } else {  // LIST_KEYS came with PyTorch ~2.10
      EXPECT_EQ(err, "ddprun store: the server at " + ep +
                         " does not support listing keys (LIST_KEYS: ddprun's store and "
                         "PyTorch's own TCPStore server from ~2.10 answer it); read known keys "
                         "with `ddprun store get KEY`\n");
    }
    EXPECT_EQ(run({"del", "/k", "--endpoint", ep}, &out, &err), 0) << err;
    EXPECT_EQ(out, "deleted\n");
    EXPECT_EQ(run({"get", "/k", "--endpoint", ep}, &out, &err), 1);
    EXPECT_EQ(err, "ddprun store: key '/k' not found\n");
  }
}

/// torch 2.6's own server (VALIDATE era, no LIST_KEYS: it closes the connection at the unknown
/// opcode): `keys` is one line saying the server cannot list keys, exit 1; the other verbs work.
TEST(StoreCommand, KeysAgainstAServerWithoutListKeysSaysSo) {
  const QuietServer quiet;
  for (const auto kind : {Emulated::torch_2x_classic, Emulated::torch_2x_libuv}) {
    auto options = test::emulating(kind);
    options.answer_list_keys = false;
    test::ServerThread st(options);
    const std::string ep = "127.0.0.1:" + std::to_string(st.start());
    std::string out;
    std::string err;
    EXPECT_EQ(run({"keys", "--endpoint", ep}, &out, &err), 1);
    EXPECT_EQ(err, "ddprun store: the server at " + ep +
                       " does not support listing keys (LIST_KEYS: ddprun's store and PyTorch's "
                       "own TCPStore server from ~2.10 answer it); read known keys with `ddprun "
                       "store get KEY`\n");
    EXPECT_EQ(run({"set", "/k", "v", "--endpoint", ep}, &out, &err), 0) << err;
  }
}

/// A forced dialect the server does not speak: exit 1 naming the endpoint and the dialect, and
/// nothing stored (the closing classic server, the silent libuv one).
TEST(StoreCommand, ForcedWrongDialectFailsNamingIt) {
  const QuietServer quiet;
  for (const auto kind : {Emulated::torch_2x_classic, Emulated::torch_2x_libuv}) {
    test::ServerThread st(test::emulating(kind));
    const std::string ep = "127.0.0.1:" + std::to_string(st.start());
    std::string err;
    EXPECT_EQ(run({"set", "/k", "v", "--endpoint", ep, "--dialect", "1.x-2.0", "--timeout", "1"},
                  nullptr, &err),
              1);
    EXPECT_NE(err.find(ep + " in dialect D0"), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_EQ(st.on_io([&st] { return st.server().state().num_keys(); }), 0U);
    std::string out;
    EXPECT_EQ(run({"set", "/k", "v", "--endpoint", ep, "--dialect", "2.2+"}, &out, &err), 0) << err;
    EXPECT_EQ(run({"get", "/k", "--endpoint", ep, "--dialect", "2.2+"}, &out, &err), 0) << err;
    EXPECT_EQ(out, "v\n");
  }
}

/// A file under TMPDIR holding `text`, mode 0600 (a token file must not be readable by others).
std::string token_file(const std::string& text) {
  std::string path = (std::getenv("TMPDIR") != nullptr ? std::getenv("TMPDIR") : "/tmp");
  path += "/ddprun-store-token-XXXXXX";
  const int fd = ::mkstemp(path.data());
  EXPECT_GE(fd, 0);
  ::close(fd);
  std::ofstream(path) << text << "\n";
  EXPECT_EQ(::chmod(path.c_str(), 0600), 0);
  return path;
}

TEST(StoreCommand, AgentKeysOfAnAuthenticatedStoreNeedItsToken) {
  ::unsetenv("DDPRUN_RDZV_TOKEN");
  ServerOptions options;
  options.token = "job-secret";
  test::ServerThread st(options);
  const std::string ep = "127.0.0.1:" + std::to_string(st.start());
  const std::string good = token_file("job-secret");
  const std::string wrong = token_file("other-secret");
  std::string out;
  std::string err;
  EXPECT_EQ(run({"set", "ddprun/rdzv/j/state", "{}", "--endpoint", ep, "--token-file", good}), 0);
  EXPECT_EQ(run({"get", "ddprun/rdzv/j/state", "--endpoint", ep, "--token-file", good}, &out), 0);
  EXPECT_EQ(out, "{}\n");
  // A worker key needs no token, even when one is given or the store has one.
  EXPECT_EQ(run({"set", "/w", "1", "--endpoint", ep}), 0);
  EXPECT_EQ(run({"get", "/w", "--endpoint", ep, "--token-file", wrong}, &out), 0);
  EXPECT_EQ(out, "1\n");
  // The key list hides the agents' keys without the token.
  EXPECT_EQ(run({"keys", "--endpoint", ep}, &out), 0);
  EXPECT_EQ(out, "/w\n");
  EXPECT_EQ(run({"keys", "--endpoint", ep, "--token-file", good}, &out), 0);
  EXPECT_EQ(out, "/w\nddprun/rdzv/j/state\n");
  // Without the token, or with another one: exit 1 and one line saying so.
  EXPECT_EQ(run({"get", "ddprun/rdzv/j/state", "--endpoint", ep}, &out, &err), 1);
  EXPECT_NE(err.find("requires a token"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_EQ(
      run({"del", "ddprun/rdzv/j/state", "--endpoint", ep, "--token-file", wrong}, &out, &err), 1);
  EXPECT_NE(err.find("uses a different token"), std::string::npos) << err;
  // The token comes from the environment too, as the agents take it.
  ::setenv("DDPRUN_RDZV_TOKEN", "job-secret", 1);
  EXPECT_EQ(run({"get", "ddprun/rdzv/j/state", "--endpoint", ep}, &out, &err), 0) << err;
  ::unsetenv("DDPRUN_RDZV_TOKEN");
  // A token file others can read is a usage error naming it, even for a worker key.
  EXPECT_EQ(::chmod(good.c_str(), 0644), 0);
  for (const auto* key : {"ddprun/x", "/w"}) {
    EXPECT_EQ(run({"get", key, "--endpoint", ep, "--token-file", good}, &out, &err), 2);
    EXPECT_NE(err.find(good), std::string::npos) << err;
    EXPECT_NE(err.find("chmod 600"), std::string::npos) << err;
  }
  ::unlink(good.c_str());
  ::unlink(wrong.c_str());
}

TEST(StoreCommand, UsageErrorsExitTwoWithOneLine) {
  std::string err;
  EXPECT_EQ(run({"frobnicate"}, nullptr, &err), 2);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_EQ(run({"set", "only-key"}, nullptr, &err), 2);
  EXPECT_EQ(run({"get", "k", "--endpoint", "nocolon"}, nullptr, &err), 2);
  EXPECT_EQ(err, "ddprun store: endpoint 'nocolon': expected HOST:PORT\n");
  EXPECT_EQ(run({"serve", "--legacy-dialect", "3.0"}, nullptr, &err), 2);
  EXPECT_EQ(run({"get", "k", "--dialect", "3.0"}, nullptr, &err), 2);
  EXPECT_EQ(err, "ddprun store: --dialect 3.0: expected auto, 1.x-2.0, 2.1 or 2.2+\n");
}

TEST(StoreCommand, ServeReportsBindError) {
  test::ServerThread st;
  const auto port = st.start();
  std::string err;
  EXPECT_EQ(run({"serve", "--host", "127.0.0.1", "--port", std::to_string(port)}, nullptr, &err),
            1);
  EXPECT_EQ(err,
            "ddprun store: bind 127.0.0.1:" + std::to_string(port) + ": Address already in use\n");
}

TEST(StoreCommand, ServeAnswersClientsAndStopsOnSigterm) {
  // From below the ephemeral range: a port freed by a listener on port 0 could be taken by
  // another test's listener or outgoing connection before `serve` binds it.
  const auto port = static_cast<std::uint16_t>(test::free_port());
  ASSERT_NE(port, 0);
  std::atomic<int> rc{-1};
  std::thread serve([&] {
    rc = store_command({"serve", "--host", "127.0.0.1", "--port", std::to_string(port)},
                       util::Env{});
  });
  ClientOptions opts;
  opts.port = port;
  opts.connect_timeout = std::chrono::seconds(10);  // retries until serve listens
  opts.op_timeout = std::chrono::seconds(5);
  SyncClient c(opts);
  const auto set = c.set("/k", "v");
  EXPECT_TRUE(set) << set.error().message;
  if (set) {
    EXPECT_EQ(*c.get("/k"), "v");
    kill(getpid(), SIGTERM);  // serve's signal_set was installed before it listened
  }                           // else serve failed to listen and has returned already
  serve.join();
  EXPECT_EQ(rc.load(), 0);
}

TEST(StoreCommand, ParseEndpointForms) {
  EXPECT_EQ(*parse_endpoint("host:29400"),
            std::make_pair(std::string("host"), std::uint16_t{29400}));
  EXPECT_EQ(parse_endpoint("[::1]:80")->first, "::1");
  EXPECT_FALSE(parse_endpoint("host:99999"));
  EXPECT_FALSE(parse_endpoint(":80"));
}

}  // namespace
}  // namespace ddprun::store
