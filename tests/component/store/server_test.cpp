// The server over real loopback sockets: byte-exact replays of the spec's captures (§7),
// D1/D2 exchanges, robustness probes (§5.11), limits and cleanup.

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "store_fixture.hpp"
#include "support/hex.hpp"

namespace ddprun::store {
namespace {

using test::from_hex;
using test::RawConn;
using test::ServerThread;
using test::to_hex;

constexpr std::chrono::milliseconds k_absence_window{100};

std::string recv_hex(RawConn& c, std::size_t n) {
  const auto got = c.recv(n);
  return got ? to_hex(*got) : "<nothing>";
}

TEST(StoreServer, ReplaysCaptured113Session) {
  ServerThread st;
  const auto port = st.start();
  ASSERT_NE(port, 0);
  RawConn c(port);
  RawConn callback(port);  // 1.13's silent second connection
  ASSERT_TRUE(c.ok() && callback.ok());
  c.send(from_hex("00 03 00 00 00 00 00 00 00 2f 6b 31 02 00 00 00 00 00 00 00 76 31"));
  c.send(from_hex("05"));
  c.send(from_hex("01 00 00 00 00 00 00 00 03 00 00 00 00 00 00 00 2f 6b 31"));
  EXPECT_EQ(recv_hex(c, 1), "00");
  c.send(from_hex("02 03 00 00 00 00 00 00 00 2f 6b 31"));
  EXPECT_EQ(recv_hex(c, 10), "02 00 00 00 00 00 00 00 76 31");
  c.send(from_hex("03 04 00 00 00 00 00 00 00 2f 63 6e 74 05 00 00 00 00 00 00 00"));
  EXPECT_EQ(recv_hex(c, 8), "05 00 00 00 00 00 00 00");
  c.send(from_hex("01"));
  c.send(
      from_hex("03 00 00 00 00 00 00 00 2f 63 73 00 00 00 00 00 00 00 00 03 00 00 00 00 00 00"
               " 00 6e 65 77"));
  EXPECT_EQ(recv_hex(c, 11), "03 00 00 00 00 00 00 00 6e 65 77");
  c.send(from_hex("06"));
  EXPECT_EQ(recv_hex(c, 8), "03 00 00 00 00 00 00 00");
  c.send(from_hex("08 03 00 00 00 00 00 00 00 2f 6b 31"));  // DELETE_KEY after the grace
  EXPECT_EQ(recv_hex(c, 8), "01 00 00 00 00 00 00 00");
  c.send(from_hex("05 01 00 00 00 00 00 00 00 06 00 00 00 00 00 00 00 2f 6e 65 76 65 72"));
  EXPECT_TRUE(c.silent_for(k_absence_window));
  // The client gave up; the late STOP_WAITING still arrives after the SET, exactly once.
  c.send(from_hex("00 06 00 00 00 00 00 00 00 2f 6e 65 76 65 72 03 00 00 00 00 00 00 00 6e 6f 77"));
  EXPECT_EQ(recv_hex(c, 1), "00");
  c.send(
      from_hex("05 01 00 00 00 00 00 00 00 04 00 00 00 00 00 00 00 2f 63 6e 74 02 04 00 00 00"
               " 00 00 00 00 2f 63 6e 74"));
  EXPECT_EQ(recv_hex(c, 10), "00 01 00 00 00 00 00 00 00 35");
  EXPECT_TRUE(c.silent_for(k_absence_window));
  EXPECT_EQ(st.connections(), 2U);
}

TEST(StoreServer, ReplaysCapturedCheckAndWatchKey) {
  ServerThread st;
  const auto port = st.start();
  RawConn c(port);
  RawConn w(port);
  c.send(from_hex("00 02 00 00 00 00 00 00 00 2f 78 05 00 00 00 00 00 00 00 68 65 6c 6c 6f"));
  c.send(from_hex("04 01 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 2f 78"));
  EXPECT_EQ(recv_hex(c, 1), "00");
  c.send(
      from_hex("04 02 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 2f 78 05 00 00 00 00 00 00"
               " 00 2f 6e 6f 70 65"));
  EXPECT_EQ(recv_hex(c, 1), "01");
  w.send(from_hex("07 03 00 00 00 00 00 00 00 2f 77 6b"));
  EXPECT_EQ(recv_hex(w, 1), "03");
  c.send(from_hex("00 03 00 00 00 00 00 00 00 2f 77 6b 02 00 00 00 00 00 00 00 76 31"));
  EXPECT_EQ(recv_hex(w, 30), to_hex(encode_watch_event(reply::k_key_created, "/wk", "", "v1")));
  c.send(from_hex("08 03 00 00 00 00 00 00 00 2f 77 6b"));
  EXPECT_EQ(recv_hex(c, 8), "01 00 00 00 00 00 00 00");
  EXPECT_EQ(recv_hex(w, 30), to_hex(encode_watch_event(reply::k_key_deleted, "/wk", "v1", "")));
}

TEST(StoreServer, MultiKeyWaitAnswersOnlyAfterLastKey) {
  ServerThread st;
  const auto port = st.start();
  RawConn waiter(port);
  RawConn setter(port);
  Request wait{Op::wait};
  wait.keys = {"/k_a", "/k_b"};
  waiter.send(*encode_request(Dialect::d0, wait));
  ASSERT_TRUE(st.eventually([](Server& s) { return s.state().parked_waits() == 1; }));
  setter.send(*encode_request(Dialect::d0, {Op::set, "/k_a", "1"}));
  EXPECT_TRUE(waiter.silent_for(k_absence_window));
  setter.send(*encode_request(Dialect::d0, {Op::set, "/k_b", "1"}));
  EXPECT_EQ(recv_hex(waiter, 1), "00");
}

TEST(StoreServer, CountsEveryAppliedRequest) {
  ServerThread st;
  const auto port = st.start();
  RawConn c(port);
  c.send(*encode_request(Dialect::d0, {Op::set, "/k_a", "1"}));
  c.send(*encode_request(Dialect::d0, {Op::set, "/k_b", "2"}));
  Request check{Op::check};
  check.keys = {"/k_a", "/k_b"};
  c.send(*encode_request(Dialect::d0, check));
  EXPECT_EQ(recv_hex(c, 1), "00") << "check answers READY once both are set";
  EXPECT_EQ(st.on_io([&st] { return st.server().stats().requests; }), 3U);
}

TEST(StoreServer, ServesD2ConnectionFromHello) {
  ServerThread st;
  const auto port = st.start();
  RawConn c(port);
  c.send(from_hex("00 ce f7 85 3c 0d 39 30 00 00"));  // VALIDATE + PING(12345)
  EXPECT_EQ(recv_hex(c, 4), "39 30 00 00");
  c.send(*encode_request(Dialect::d2, {Op::set, "/a", "1"}));
  c.send(*encode_request(Dialect::d2, {Op::append, "/a", "2"}));
  c.send(*encode_request(Dialect::d2, {Op::get, "/a"}));
  EXPECT_EQ(recv_hex(c, 10), "02 00 00 00 00 00 00 00 31 32");
  c.send(*encode_request(Dialect::d2, {Op::list_keys}));
  EXPECT_EQ(recv_hex(c, 18), "01 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 2f 61");
  c.send(*encode_request(Dialect::d2, {Op::queue_push, "q", "x"}));
  c.send(*encode_request(Dialect::d2, {Op::queue_len, "q"}));
  EXPECT_EQ(recv_hex(c, 8), "01 00 00 00 00 00 00 00");
  Request wait{Op::wait};
  wait.keys = {"/never"};
  c.send(*encode_request(Dialect::d2, wait));
  c.send(*encode_request(Dialect::d2, {Op::cancel_wait}));
  EXPECT_EQ(recv_hex(c, 1), "01");
  EXPECT_EQ(st.parked_waits(), 0U);
}

TEST(StoreServer, BarrierReleasesBothD2Connections) {
  ServerThread st;
  const auto port = st.start();
  RawConn a(port);
  RawConn b(port);
  Request barrier{Op::barrier, "/bar"};
  barrier.number = 2;
  a.send(encode_validate() + *encode_request(Dialect::d2, barrier));
  ASSERT_TRUE(st.eventually([](Server& s) { return s.state().parked_waits() == 1; }));
  b.send(encode_validate() + *encode_request(Dialect::d2, barrier));
  EXPECT_EQ(recv_hex(b, 1), "00");
  EXPECT_EQ(recv_hex(a, 1), "00");
}

TEST(StoreServer, D1AppendAndMultiOpsOnLegacyConnection) {
  ServerThread st;
  const auto port = st.start();
  RawConn c(port);
  c.send(*encode_request(Dialect::d1, {Op::append, "/ap", "ab"}));
  Request ms{Op::multi_set};
  ms.pairs = {{"/x", "1"}, {"/y", "2"}};
  c.send(*encode_request(Dialect::d1, ms));
  Request mg{Op::multi_get};
  mg.keys = {"/ap", "/y"};
  c.send(*encode_request(Dialect::d1, mg));
  EXPECT_EQ(recv_hex(c, 19), "02 00 00 00 00 00 00 00 61 62 01 00 00 00 00 00 00 00 32");
  c.send(*encode_request(Dialect::d1, {Op::delete_key, "/x"}));  // 7 = DELETE_KEY in D1
  EXPECT_EQ(recv_hex(c, 8), "01 00 00 00 00 00 00 00");
}

TEST(StoreServer, RequestSentOneByteAtATimeIsServed) {
  ServerThread st;
  const auto port = st.start();
  RawConn c(port);
  const std::string bytes = *encode_request(Dialect::d0, {Op::compare_set, "/cs", "", "v"});
  for (char ch : bytes) {
    c.send(std::string(1, ch));
  }
  EXPECT_EQ(recv_hex(c, 9), "01 00 00 00 00 00 00 00 76");
}

struct ProbeCase {
  const char* name;
  const char* hex;
};

class StoreServerProbe : public ::testing::TestWithParam<ProbeCase> {};

TEST_P(StoreServerProbe, ClosesOnlyTheOffendingConnection) {
  ServerThread st;
  const auto port = st.start();
  RawConn good(port);
  good.send(*encode_request(Dialect::d0, {Op::set, "/x", "hello"}));
  RawConn bad(port);
  bad.send(from_hex(GetParam().hex));
  EXPECT_TRUE(bad.closed_by_peer());
  good.send(*encode_request(Dialect::d0, {Op::get_num_keys}));
  EXPECT_EQ(recv_hex(good, 8), "01 00 00 00 00 00 00 00");
}

INSTANTIATE_TEST_SUITE_P(
    Spec, StoreServerProbe,
    ::testing::Values(
        ProbeCase{"UnknownOpcode", "0c 03 00 00 00 00 00 00 00 2f 61 70"},
        ProbeCase{"AddOnNonNumber", "03 02 00 00 00 00 00 00 00 2f 78 01 00 00 00 00 00 00 00"},
        ProbeCase{"KeyLengthTwoPow40", "00 00 00 00 00 00 01 00 00"},
        ProbeCase{"ValueOverLimit", "00 01 00 00 00 00 00 00 00 61 01 00 80 00 00 00 00 00"},
        ProbeCase{"WrongValidateMagic", "00 ce f7 85 3c 00 01 02 03 04"}),
    [](const ::testing::TestParamInfo<ProbeCase>& p) { return p.param.name; });

TEST(StoreServer, MalformedInputLogsPeerAndReason) {
  std::ostringstream log;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  {
    ServerThread st;
    const auto port = st.start();
    RawConn bad(port);
    bad.send(from_hex("13"));
    EXPECT_TRUE(bad.closed_by_peer());
  }
  spdlog::set_default_logger(previous);
  EXPECT_NE(log.str().find("closing connection from 127.0.0.1:"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("malformed request: unknown opcode 0x13 in legacy dialect"),
            std::string::npos)
      << log.str();
}

TEST(StoreServer, DisconnectDropsParkedWaits) {
  ServerThread st;
  const auto port = st.start();
  {
    RawConn c(port);
    Request wait{Op::wait};
    wait.keys = {"/never"};
    c.send(*encode_request(Dialect::d0, wait));
    ASSERT_TRUE(st.eventually([](Server& s) { return s.state().parked_waits() == 1; }));
  }
  EXPECT_TRUE(st.eventually(
      [](Server& s) { return s.state().parked_waits() == 0 && s.connection_count() == 0; }));
}

TEST(StoreServer, ConnectionCapRefusesExtraConnections) {
  ServerOptions opts;
  opts.max_connections = 2;
  ServerThread st(opts);
  const auto port = st.start();
  RawConn a(port);
  RawConn b(port);
  ASSERT_TRUE(st.eventually([](Server& s) { return s.connection_count() == 2; }));
  RawConn c(port);
  EXPECT_TRUE(c.closed_by_peer());
  a.send(*encode_request(Dialect::d0, {Op::get_num_keys}));
  EXPECT_EQ(recv_hex(a, 8), "00 00 00 00 00 00 00 00");
}

TEST(StoreServer, ParkedWaitCapClosesConnection) {
  ServerOptions opts;
  opts.max_parked_waits_per_connection = 1;
  ServerThread st(opts);
  const auto port = st.start();
  RawConn c(port);
  Request wait{Op::wait};
  wait.keys = {"/never"};
  c.send(*encode_request(Dialect::d0, wait) + *encode_request(Dialect::d0, wait));
  EXPECT_TRUE(c.closed_by_peer());
}

TEST(StoreServer, BindErrorNamesHostAndPort) {
  ServerThread st;
  const auto port = st.start();
  asio::io_context io;
  Server second(io);
  const auto r = second.listen("127.0.0.1", port);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "bind 127.0.0.1:" + std::to_string(port) + ": Address already in use");
}

TEST(StoreServer, DualStackListenServesIpv4Loopback) {
  ServerThread st;
  const auto port = st.start("");  // [::] with v6_only off
  ASSERT_NE(port, 0);
  RawConn c(port);  // connects to 127.0.0.1
  ASSERT_TRUE(c.ok());
  c.send(*encode_request(Dialect::d0, {Op::get_num_keys}));
  EXPECT_EQ(recv_hex(c, 8), "00 00 00 00 00 00 00 00");
  EXPECT_GT(st.on_io([&st] { return st.server().connection_limit(); }), 0U);
}

}  // namespace
}  // namespace ddprun::store
