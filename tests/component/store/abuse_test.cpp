// Store abuse (issue 8): random bytes, huge length prefixes, slowloris, connection floods,
// waits that never end, the memory cap and log hygiene. In every case the offender is dropped,
// the server's own counters stay bounded and a well-behaved client on another connection keeps
// working. Every wait is bounded; nothing asserts on timing.

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sys/resource.h>

#include <memory>
#include <random>
#include <sstream>
#include <vector>

#include "store_fixture.hpp"
#include "support/hex.hpp"

namespace ddprun::store {
namespace {

using test::from_hex;
using test::RawConn;
using test::ServerThread;
using test::to_hex;

constexpr std::size_t k_random_blobs = 64;
constexpr std::size_t k_random_blob_bytes = 4096;
constexpr std::size_t k_flood_cap = 200;
constexpr std::size_t k_flood_extra = 100;
constexpr std::size_t k_small_memory_cap = 1024 * 1024;
constexpr std::chrono::milliseconds k_short_frame_timeout{200};

/// A connection that must keep working: one GETNUMKEYS round trip.
bool good_client_works(RawConn& c) {
  if (!c.send(*encode_request(Dialect::d0, {Op::get_num_keys}))) {
    return false;
  }
  return c.recv(8).has_value();
}

bool server_is_clean(Server& s, std::size_t connections) {
  const auto st = s.stats();
  return st.connections == connections && st.input_bytes == 0 && st.output_bytes == 0 &&
         st.parked_waits == 0;
}

/// Captures spdlog output for the lifetime of the object.
class LogCapture {
 public:
  LogCapture() : previous_(spdlog::default_logger()) {
    spdlog::set_default_logger(std::make_shared<spdlog::logger>(
        "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_)));
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  std::string text() const { return log_.str(); }

 private:
  std::ostringstream log_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST(StoreAbuse, RandomBytesAreDroppedAndLeaveNothingBehind) {
  ServerThread st;
  const auto port = st.start();
  RawConn good(port);
  ASSERT_TRUE(good_client_works(good));
  std::mt19937 rng(20261130);  // fixed seed: the same blobs every run
  std::uniform_int_distribution<int> byte(0, 255);
  std::size_t sent = 0;
  for (std::size_t i = 0; i < k_random_blobs; ++i) {
    RawConn bad(port);
    std::string blob(k_random_blob_bytes, '\0');
    for (auto& c : blob) {
      c = static_cast<char>(byte(rng));
    }
    bad.send(blob);  // may fail half-way once the server has closed it
    sent += blob.size();
    ASSERT_TRUE(good_client_works(good)) << "blob " << i;
  }  // each offender that is still open closes here
  EXPECT_TRUE(st.eventually([](Server& s) { return server_is_clean(s, 1); }));
  const auto stats = st.on_io([&st] { return st.server().stats(); });
  EXPECT_GT(stats.dropped_malformed, k_random_blobs / 2);
  EXPECT_LE(stats.stored_bytes, sent);  // random SETs may store, never more than was sent
  EXPECT_TRUE(good_client_works(good));
}

TEST(StoreAbuse, HugeLengthPrefixesCloseBeforeAllocating) {
  ServerThread st;
  const auto port = st.start();
  RawConn good(port);
  const std::vector<std::string> prefixes = {
      "00 ff ff ff ff ff ff ff 7f",                             // SET key of 2^63 bytes
      "00 01 00 00 00 00 00 00 00 6b 00 00 00 00 00 01 00 00",  // SET value of 2^40 bytes
      "04 ff ff ff ff ff ff ff ff",                             // CHECK of 2^64-1 keys
      "05 00 00 00 00 10 00 00 00",                             // WAIT of 2^36 keys
      "00 ce f7 85 3c 0b ff ff ff ff ff ff ff ff",              // D2 MULTI_SET of 2^64-1 pairs
  };
  for (const auto& hex : prefixes) {
    RawConn bad(port);
    bad.send(from_hex(hex));
    EXPECT_TRUE(bad.closed_by_peer()) << hex;
    EXPECT_TRUE(good_client_works(good)) << hex;
    EXPECT_LT(st.on_io([&st] { return st.server().stats().input_bytes; }), 64U) << hex;
  }
  EXPECT_TRUE(st.eventually([](Server& s) { return server_is_clean(s, 1); }));
  EXPECT_EQ(st.on_io([&st] { return st.server().stats().dropped_malformed; }), prefixes.size());
}

TEST(StoreAbuse, StalledPartialRequestIsDroppedIdleAndWaitingConnectionsStay) {
  ServerOptions opts;
  opts.frame_timeout = k_short_frame_timeout;
  ServerThread st(opts);
  const auto port = st.start();
  RawConn idle(port);
  ASSERT_TRUE(good_client_works(idle));
  RawConn waiter(port);
  Request wait{Op::wait};
  wait.keys = {"/later"};
  waiter.send(*encode_request(Dialect::d0, wait));
  ASSERT_TRUE(st.eventually([](Server& s) { return s.state().parked_waits() == 1; }));
  // Declares an 8 MiB value and sends 1 KiB of it: buffered as sent, not preallocated.
  RawConn slow(port);
  std::string partial = from_hex("00 01 00 00 00 00 00 00 00 6b 00 00 80 00 00 00 00 00");
  partial += std::string(1024, 'v');
  slow.send(partial);
  EXPECT_TRUE(slow.closed_by_peer());
  const auto stats = st.on_io([&st] { return st.server().stats(); });
  EXPECT_EQ(stats.dropped_stalled, 1U);
  EXPECT_EQ(stats.input_bytes, 0U);
  // The idle connection and the parked wait outlived the sweep that dropped the staller.
  EXPECT_EQ(stats.connections, 2U);
  EXPECT_TRUE(good_client_works(idle));
  idle.send(*encode_request(Dialect::d0, {Op::set, "/later", "1"}));
  EXPECT_EQ(waiter.recv(1), std::optional<std::string>(std::string(1, '\0')));
}

/// Raises the soft open-file limit so that the flood fits (the test's and the server's fds).
bool ensure_open_files(rlim_t want) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) {
    return false;
  }
  if (lim.rlim_cur >= want) {
    return true;
  }
  if (lim.rlim_max < want) {
    return false;
  }
  lim.rlim_cur = want;
  return setrlimit(RLIMIT_NOFILE, &lim) == 0;
}

TEST(StoreAbuse, ConnectionFloodBeyondTheCapIsRefusedExistingClientsKeepWorking) {
  const std::size_t flood = k_flood_cap + k_flood_extra;
  if (!ensure_open_files(static_cast<rlim_t>(4 * flood))) {
    GTEST_SKIP() << "RLIMIT_NOFILE hard limit below " << 4 * flood;
  }
  ServerOptions opts;
  opts.max_connections = k_flood_cap;
  ServerThread st(opts);
  const auto port = st.start();
  RawConn good(port);
  ASSERT_TRUE(good_client_works(good));
  std::vector<std::unique_ptr<RawConn>> conns;
  for (std::size_t i = 0; i < flood; ++i) {
    conns.push_back(std::make_unique<RawConn>(port));
  }
  // The good connection plus k_flood_cap - 1 of the flood are admitted, the rest refused.
  EXPECT_TRUE(st.eventually([](Server& s) {
    return s.stats().refused_connections == k_flood_extra + 1 &&
           s.connection_count() == k_flood_cap;
  })) << "refused "
      << st.on_io([&st] { return st.server().stats().refused_connections; });
  EXPECT_TRUE(conns.back()->closed_by_peer());
  EXPECT_TRUE(good_client_works(good));
  conns.clear();
  EXPECT_TRUE(st.eventually([](Server& s) { return server_is_clean(s, 1); }));
  RawConn after(port);  // slots are free again
  EXPECT_TRUE(good_client_works(after));
}

TEST(StoreAbuse, NeverEndingWaitsAreCappedAndCleanedUpOnDisconnect) {
  constexpr std::size_t k_waiters = 20;
  ServerOptions opts;
  opts.max_parked_waits = k_waiters;
  ServerThread st(opts);
  const auto port = st.start();
  RawConn good(port);
  Request wait{Op::wait};
  wait.keys = {"/never"};
  {
    std::vector<std::unique_ptr<RawConn>> waiters;
    for (std::size_t i = 0; i < k_waiters; ++i) {
      waiters.push_back(std::make_unique<RawConn>(port));
      waiters.back()->send(*encode_request(Dialect::d0, wait));
    }
    ASSERT_TRUE(st.eventually([](Server& s) { return s.state().parked_waits() == k_waiters; }));
    RawConn one_too_many(port);
    one_too_many.send(*encode_request(Dialect::d0, wait));
    EXPECT_TRUE(one_too_many.closed_by_peer());
    EXPECT_TRUE(good_client_works(good));
  }  // the waiters give up and disconnect
  EXPECT_TRUE(st.eventually([](Server& s) { return server_is_clean(s, 1); }));
  good.send(*encode_request(Dialect::d0, {Op::set, "/never", "now"}));
  EXPECT_TRUE(good_client_works(good));
}

TEST(StoreAbuse, MemoryCapRefusesTheConnectionThatWouldPassIt) {
  ServerOptions opts;
  opts.max_memory_bytes = k_small_memory_cap;
  ServerThread st(opts);
  const auto port = st.start();
  RawConn good(port);
  good.send(*encode_request(Dialect::d0, {Op::set, "/small", "1"}));
  ASSERT_TRUE(good_client_works(good));
  {
    RawConn hog(port);  // 256 KiB values under new keys until the cap refuses one
    const std::string value(k_small_memory_cap / 4, 'x');
    for (int i = 0; i < 8 && hog.send(*encode_request(
                                 Dialect::d0, {Op::set, "/hog" + std::to_string(i), value}));
         ++i) {
    }
    EXPECT_TRUE(hog.closed_by_peer());
  }
  {
    RawConn partial(port);  // declares 8 MiB and sends 2 MiB of it: over the cap while buffered
    std::string bytes = from_hex("00 01 00 00 00 00 00 00 00 70 00 00 80 00 00 00 00 00");
    bytes += std::string(2 * k_small_memory_cap, 'p');
    partial.send(bytes);
    EXPECT_TRUE(partial.closed_by_peer());
  }
  const auto stats = st.on_io([&st] { return st.server().stats(); });
  EXPECT_EQ(stats.dropped_memory, 2U);
  EXPECT_LE(stats.memory_in_use(), k_small_memory_cap);
  EXPECT_TRUE(good_client_works(good));
  good.send(*encode_request(Dialect::d0, {Op::get, "/small"}));
  EXPECT_EQ(good.recv(9), std::optional<std::string>(from_hex("01 00 00 00 00 00 00 00 31")));
  EXPECT_TRUE(st.eventually([](Server& s) { return server_is_clean(s, 1); }));
}

TEST(StoreAbuse, LogLinesTruncateKeysAndNeverShowValues) {
  const std::string long_key = "/" + std::string(5000, 'k');
  const std::string secret = "value-that-must-not-be-logged";
  LogCapture log;
  {
    ServerThread st;
    const auto port = st.start();
    RawConn a(port);  // ADD on a non-integer value: closed, the key is named
    a.send(*encode_request(Dialect::d0, {Op::set, long_key, secret}));
    Request add{Op::add, long_key};
    add.number = 1;
    a.send(*encode_request(Dialect::d0, add));
    EXPECT_TRUE(a.closed_by_peer());
  }
  {
    ServerOptions opts;
    opts.max_memory_bytes = 4096;
    ServerThread st(opts);
    const auto port = st.start();
    RawConn b(port);  // refused by the memory cap (whole or while partial)
    b.send(*encode_request(Dialect::d0, {Op::set, long_key, secret + std::string(4096, 's')}));
    EXPECT_TRUE(b.closed_by_peer());
  }
  const std::string text = log.text();
  EXPECT_NE(text.find("ADD on non-integer value"), std::string::npos) << text;
  EXPECT_NE(text.find("...(5001 bytes)"), std::string::npos) << text;
  EXPECT_NE(text.find("server memory cap of 4096 bytes"), std::string::npos) << text;
  EXPECT_EQ(text.find(std::string(k_log_key_chars + 1, 'k')), std::string::npos) << text;
  EXPECT_EQ(text.find(secret), std::string::npos) << text;
}

}  // namespace
}  // namespace ddprun::store
