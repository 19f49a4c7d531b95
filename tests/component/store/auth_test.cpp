// A store started with a rendezvous token, over loopback: unauthenticated clients keep the
// workers' keys and lose the protected ones; only a client with the same token gets in, and a
// client with a token refuses a store without one.

#include "ddprun/store/auth.hpp"

#include "ddprun/store/client.hpp"

#include <gtest/gtest.h>

#include "store_fixture.hpp"

namespace ddprun::store {
namespace {

using namespace std::chrono_literals;

constexpr auto k_token = "job-secret";
constexpr auto k_state_key = "ddprun/rdzv/job/state";

ServerOptions with_token(std::string token) {
  ServerOptions o;
  o.token = std::move(token);
  return o;
}

ClientOptions client(std::uint16_t port, AuthMode auth, std::string token = {},
                     Dialect dialect = Dialect::d0) {
  ClientOptions o;
  o.port = port;
  o.dialect = dialect;
  o.auth = auth;
  o.token = std::move(token);
  o.connect_timeout = 120s;  // an auth refusal must come back at once, not after this
  o.op_timeout = 10s;
  return o;
}

TEST(StoreAuthServer, AuthenticatedClientUsesProtectedKeys) {
  for (Dialect d : {Dialect::d0, Dialect::d2}) {
    test::ServerThread st(with_token(k_token));
    const auto port = st.start();
    SyncClient c(client(port, AuthMode::token, k_token, d));
    ASSERT_TRUE(c.set(k_state_key, "s1"));
    EXPECT_EQ(*c.get(k_state_key), "s1");
    EXPECT_EQ(*c.compare_set(k_state_key, "s1", "s2"), "s2");
    EXPECT_EQ(*c.add("ddprun/n", 2), 2);
  }
}

TEST(StoreAuthServer, UnauthenticatedClientKeepsWorkerKeysButNotProtectedOnes) {
  test::ServerThread st(with_token(k_token));
  const auto port = st.start();
  SyncClient owner(client(port, AuthMode::token, k_token));
  ASSERT_TRUE(owner.set(k_state_key, "s1"));

  SyncClient worker(client(port, AuthMode::off, {}, Dialect::d2));
  ASSERT_TRUE(worker.set("/worker/0", "w"));
  EXPECT_EQ(*worker.get("/worker/0"), "w");
  EXPECT_EQ(*worker.num_keys(), 1);  // the state key is not even counted
  auto keys = worker.list_keys();
  ASSERT_TRUE(keys);
  EXPECT_EQ(*keys, std::vector<std::string>{"/worker/0"});

  auto overwrite = worker.set(k_state_key, "forged");
  auto read_back = worker.check({k_state_key});  // the connection was closed on the set
  EXPECT_TRUE(!overwrite || !read_back || !*read_back);
  SyncClient reader(client(port, AuthMode::off));
  EXPECT_FALSE(reader.compare_set(k_state_key, "s1", "forged"));
  EXPECT_FALSE(reader.delete_key(k_state_key));
  EXPECT_EQ(*owner.get(k_state_key), "s1");
}

TEST(StoreAuthServer, TokenlessAgentGetsTheClearErrorAtOnce) {
  test::ServerThread st(with_token(k_token));
  const auto port = st.start();
  SyncClient c(client(port, AuthMode::probe));
  const auto started = std::chrono::steady_clock::now();
  auto r = c.connect();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message.rfind(
                "rendezvous at 127.0.0.1:" + std::to_string(port) + " requires a token; ", 0),
            0U)
      << r.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - started, 120s);  // not retried until the timeout
}

TEST(StoreAuthServer, WrongTokenIsRefusedBothWays) {
  test::ServerThread st(with_token(k_token));
  const auto port = st.start();
  SyncClient c(client(port, AuthMode::token, "another-secret"));
  auto r = c.set(k_state_key, "forged");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("uses a different token"), std::string::npos)
      << r.error().message;
  SyncClient owner(client(port, AuthMode::token, k_token));
  EXPECT_FALSE(*owner.check({k_state_key}));
}

TEST(StoreAuthServer, ClientWithTokenRefusesAStoreWithout) {
  test::ServerThread st;
  const auto port = st.start();
  SyncClient c(client(port, AuthMode::token, k_token));
  auto r = c.connect();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("does not require a rendezvous token"), std::string::npos)
      << r.error().message;
  SyncClient probe(client(port, AuthMode::probe));  // a tokenless pair works as before
  ASSERT_TRUE(probe.set(k_state_key, "s"));
  EXPECT_EQ(*probe.get(k_state_key), "s");
}

}  // namespace
}  // namespace ddprun::store
