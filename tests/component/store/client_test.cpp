// Client against our Server on ONE io_context (the agent's situation: no deadlock allowed),
// and SyncClient against a server on a background thread.

#include "ddprun/store/client.hpp"

#include <gtest/gtest.h>

#include <optional>

#include "store_fixture.hpp"
#include "support/ports.hpp"

namespace ddprun::store {
namespace {

using namespace std::chrono_literals;

constexpr auto k_test_deadline = 20s;

/// Runs `body` as a coroutine on `io` until it finishes or the deadline passes.
template <typename F>
bool run_on(asio::io_context& io, F body) {
  bool done = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await body();
        done = true;
      },
      asio::detached);
  const auto deadline = std::chrono::steady_clock::now() + k_test_deadline;
  while (!done && std::chrono::steady_clock::now() < deadline) {
    io.run_one_for(100ms);
  }
  return done;
}

/// Builds key lists outside coroutine bodies (g++ 12 rejects braced lists across co_await).
template <typename... S>
std::vector<std::string> keys(S... s) {
  return {std::string(s)...};
}

KeyValues two_pairs() { return {{"/m1", "a"}, {"/m2", std::string("\0b", 2)}}; }

ClientOptions options_for(std::uint16_t port, Dialect dialect) {
  ClientOptions o;
  o.port = port;
  o.dialect = dialect;
  o.connect_timeout = 5s;
  o.op_timeout = 5s;
  return o;
}

class StoreClientDialect : public ::testing::TestWithParam<Dialect> {};

TEST_P(StoreClientDialect, EveryOperationAgainstOurServerOnOneIoContext) {
  asio::io_context io;
  Server server(io);
  ASSERT_TRUE(server.listen("127.0.0.1", 0));
  Client c(io, options_for(server.port(), GetParam()));
  Client other(io, options_for(server.port(), GetParam()));
  const bool finished = run_on(io, [&]() -> asio::awaitable<void> {
    EXPECT_TRUE(co_await c.connect());
    EXPECT_TRUE(co_await c.set("/k1", "v1"));
    EXPECT_EQ(*(co_await c.get("/k1")), "v1");
    EXPECT_EQ(*(co_await c.add("/cnt", 5)), 5);
    EXPECT_EQ(*(co_await c.add("/cnt", -7)), -2);
    EXPECT_EQ(*(co_await c.compare_set("/cs", "", "new")), "new");
    EXPECT_EQ(*(co_await c.compare_set("/cs2", "zzz", "new")), "zzz");
    EXPECT_EQ(*(co_await c.compare_set("/cs", "new", "newer")), "newer");
    EXPECT_TRUE(*(co_await c.check(keys("/k1", "/cs"))));
    EXPECT_FALSE(*(co_await c.check(keys("/k1", "/nope"))));
    EXPECT_EQ(*(co_await c.num_keys()), 3);
    EXPECT_TRUE(*(co_await c.delete_key("/k1")));
    EXPECT_FALSE(*(co_await c.delete_key("/k1")));
    EXPECT_TRUE(co_await c.multi_set(two_pairs()));
    const auto values = co_await c.multi_get(keys("/m1", "/m2"));
    EXPECT_EQ(*values, keys("a", std::string("\0b", 2)));
    EXPECT_TRUE(co_await c.wait(keys("/m1", "/cnt"), 1s));
    const auto timed_out = co_await c.wait(keys("/never"), 200ms);
    EXPECT_EQ(timed_out.error().code, ErrorCode::timeout) << timed_out.error().message;
    EXPECT_EQ(*(co_await c.add("/cnt", 2)), 0) << "reconnects after a timeout";
    EXPECT_TRUE(co_await other.set("/never", "now"));
    EXPECT_EQ(*(co_await c.get("/never")), "now");
  });
  EXPECT_TRUE(finished);
}

INSTANTIATE_TEST_SUITE_P(Dialects, StoreClientDialect, ::testing::Values(Dialect::d0, Dialect::d2),
                         [](const ::testing::TestParamInfo<Dialect>& p) {
                           return std::string(to_string(p.param));
                         });

TEST(StoreClient, BlockingGetWakesWhenAnotherClientSets) {
  asio::io_context io;
  Server server(io);
  ASSERT_TRUE(server.listen("127.0.0.1", 0));
  Client getter(io, options_for(server.port(), Dialect::d0));
  Client setter(io, options_for(server.port(), Dialect::d2));
  std::optional<Result<std::string>> got;
  asio::co_spawn(
      io, [&]() -> asio::awaitable<void> { got.emplace(co_await getter.get("/late")); },
      asio::detached);
  const bool finished = run_on(io, [&]() -> asio::awaitable<void> {
    while (server.state().parked_waits() == 0) {  // the getter has parked
      asio::steady_timer t(io, 1ms);
      co_await t.async_wait(asio::use_awaitable);
    }
    EXPECT_TRUE(co_await setter.set("/late", "x"));
    while (!got) {
      asio::steady_timer t(io, 1ms);
      co_await t.async_wait(asio::use_awaitable);
    }
  });
  ASSERT_TRUE(finished);
  EXPECT_EQ(**got, "x");
}

TEST(StoreClient, D2OnlyOperations) {
  asio::io_context io;
  Server server(io);
  ASSERT_TRUE(server.listen("127.0.0.1", 0));
  Client d2(io, options_for(server.port(), Dialect::d2));
  Client d0(io, options_for(server.port(), Dialect::d0));
  const bool finished = run_on(io, [&]() -> asio::awaitable<void> {
    EXPECT_TRUE(co_await d2.append("/ap", "ab"));
    EXPECT_TRUE(co_await d2.append("/ap", "cd"));
    EXPECT_EQ(*(co_await d2.get("/ap")), "abcd");
    EXPECT_EQ(*(co_await d2.list_keys()), keys("/ap"));
    EXPECT_EQ((co_await d0.list_keys()).error().code, ErrorCode::usage);
    EXPECT_EQ((co_await d0.append("/ap", "x")).error().code, ErrorCode::usage);
  });
  EXPECT_TRUE(finished);
}

TEST(StoreClient, ConnectGivesUpWithinTimeout) {
  const test::RefusingPort refusing;
  ASSERT_NE(refusing.port(), 0);
  auto opts = options_for(static_cast<std::uint16_t>(refusing.port()), Dialect::d0);
  opts.connect_timeout = 300ms;
  SyncClient c(opts);
  const auto r = c.connect();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("gave up after 300 ms"), std::string::npos) << r.error().message;
}

TEST(StoreClient, SyncClientAgainstServerThread) {
  test::ServerThread st;
  const auto port = st.start();
  SyncClient c(options_for(port, Dialect::d0));
  ASSERT_TRUE(c.set("/a", "1"));
  EXPECT_EQ(*c.get("/a"), "1");
  EXPECT_EQ(*c.add("/a", 41), 42);
  EXPECT_EQ(*c.num_keys(), 1);
  EXPECT_EQ(c.wait({"/b"}, 100ms).error().code, ErrorCode::timeout);
  EXPECT_TRUE(*c.delete_key("/a"));
}

}  // namespace
}  // namespace ddprun::store
