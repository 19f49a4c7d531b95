// The client finds the dialect of every kind of server (dialect_probe.hpp): ddprun's own, and
// ddprun's server emulating PyTorch's 1.x, 2.1 and VALIDATE-era (classic and libuv, with and
// without PING) servers; a forced wrong dialect and a silent server fail with a reason.

#include "ddprun/store/client.hpp"

#include <gtest/gtest.h>

#include <sys/socket.h>

#include "store_fixture.hpp"

namespace ddprun::store {
namespace {

using namespace std::chrono_literals;
using test::Emulated;

ClientOptions detecting(std::uint16_t port) {
  ClientOptions o;
  o.port = port;
  o.detect_dialect = true;
  o.connect_timeout = 10s;
  o.op_timeout = 10s;
  o.probe_timeout = 2s;
  return o;
}

/// The value, or `fallback` after a failure that names itself.
template <typename T>
T ok_or(const Result<T>& r, T fallback) {
  EXPECT_TRUE(r) << (r ? std::string() : r.error().message);
  return r ? *r : fallback;
}

struct Case {
  Emulated server;
  Dialect expected;
};

class StoreDialectDetection : public testing::TestWithParam<Case> {};

TEST_P(StoreDialectDetection, FindsTheDialectAndEveryVerbWorks) {
  test::ServerThread st(test::emulating(GetParam().server));
  SyncClient c(detecting(st.start()));
  const auto set = c.set_confirmed("/k", "v1");
  ASSERT_TRUE(set) << set.error().message;
  EXPECT_EQ(c.dialect(), GetParam().expected);
  EXPECT_EQ(ok_or(c.get("/k"), std::string("?")), "v1");
  EXPECT_EQ(ok_or(c.add("/n", 5), std::int64_t{-1}), 5);
  EXPECT_EQ(ok_or(c.add("/n", -7), std::int64_t{-1}), -2);
  EXPECT_TRUE(ok_or(c.check({"/k", "/n"}), false));
  EXPECT_TRUE(ok_or(c.delete_key("/k"), false));
  EXPECT_FALSE(ok_or(c.delete_key("/k"), true));
  EXPECT_EQ(ok_or(c.num_keys(), std::int64_t{-1}), 1);
  const auto keys = c.list_keys();
  EXPECT_EQ(keys.has_value(), GetParam().expected == Dialect::d2);
  EXPECT_EQ(st.on_io([&st] { return st.server().state().value("/n"); }), "-2");
}

INSTANTIATE_TEST_SUITE_P(EveryServer, StoreDialectDetection,
                         testing::Values(Case{Emulated::ours, Dialect::d2},
                                         Case{Emulated::torch_1x, Dialect::d0},
                                         Case{Emulated::torch_2_1, Dialect::d1},
                                         Case{Emulated::torch_2x_classic, Dialect::d2},
                                         Case{Emulated::torch_2x_libuv, Dialect::d2},
                                         Case{Emulated::torch_2_2_classic, Dialect::d2},
                                         Case{Emulated::torch_2_2_libuv, Dialect::d2}));

/// The bug: a 1.x-dialect SET against a VALIDATE-era server stored nothing and reported
/// success. Confirmed, it fails with the endpoint and the dialect.
TEST(StoreDialect, ConfirmedSetInTheWrongDialectFails) {
  for (const auto server : {Emulated::torch_2x_classic, Emulated::torch_2x_libuv}) {
    test::ServerThread st(test::emulating(server));
    auto o = detecting(st.start());
    o.detect_dialect = false;  // what `ddprun store set` did before: D0, no reply awaited
    o.dialect = Dialect::d0;
    o.op_timeout = 1s;
    SyncClient c(o);
    const auto r = c.set_confirmed("/k", "v");
    ASSERT_FALSE(r);
    const std::string where = "127.0.0.1:" + std::to_string(o.port) + " in dialect D0";
    EXPECT_NE(r.error().message.find(where), std::string::npos) << r.error().message;
    EXPECT_EQ(st.on_io([&st] { return st.server().state().num_keys(); }), 0U);
  }
}

TEST(StoreDialect, SilentServerFailsAfterOneProbeNamingIt) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);  // listens, never accepts, never answers
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  auto o = detecting(ntohs(addr.sin_port));
  o.probe_timeout = 300ms;
  SyncClient c(o);
  const auto r = c.set_confirmed("/k", "v");
  ::close(fd);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::protocol);
  EXPECT_NE(r.error().message.find("127.0.0.1:" + std::to_string(o.port) +
                                   " did not answer the VALIDATE+PING (D2) probe within 300 ms"),
            std::string::npos)
      << r.error().message;
}

}  // namespace
}  // namespace ddprun::store
