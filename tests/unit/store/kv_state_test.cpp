// KvState semantics (spec §2): values, waiters, watchers, queues, barrier, cleanup.

#include "ddprun/store/kv_state.hpp"

#include <gtest/gtest.h>

#include "support/hex.hpp"

namespace ddprun::store {
namespace {

using test::from_hex;
using test::to_hex;

constexpr ConnId k_a = 1;
constexpr ConnId k_b = 2;
const std::string k_stop(1, '\0');

Request wait_for(std::vector<std::string> keys) {
  Request r{Op::wait};
  r.keys = std::move(keys);
  return r;
}

Request add(std::string key, std::int64_t delta) {
  Request r{Op::add, std::move(key)};
  r.number = delta;
  return r;
}

std::int64_t as_i64(const std::string& reply) { return static_cast<std::int64_t>(get_u64(reply)); }

std::string bytes_reply(std::string_view v) {
  std::string out;
  put_bytes(out, v);
  return out;
}

TEST(StoreKvState, SetThenGetReturnsValue) {
  KvState kv;
  EXPECT_TRUE(kv.apply(k_a, {Op::set, "/k1", "v1"}).reply.empty());
  EXPECT_EQ(to_hex(kv.apply(k_a, {Op::get, "/k1"}).reply), "02 00 00 00 00 00 00 00 76 31");
}

TEST(StoreKvState, GetOfMissingKeyAnswersEmpty) {
  KvState kv;
  EXPECT_EQ(kv.apply(k_a, {Op::get, "/nope"}).reply, bytes_reply(""));
}

TEST(StoreKvState, AddFollowsCapturedSequence) {
  KvState kv;
  EXPECT_EQ(as_i64(kv.apply(k_a, add("/cnt", 5)).reply), 5);
  EXPECT_EQ(as_i64(kv.apply(k_a, add("/cnt", 3)).reply), 8);
  EXPECT_EQ(to_hex(kv.apply(k_a, add("/cnt", -10)).reply), "fe ff ff ff ff ff ff ff");
  EXPECT_EQ(kv.value("/cnt"), "-2");
}

TEST(StoreKvState, AddUsesStollPrefix) {
  KvState kv;
  kv.apply(k_a, {Op::set, "/x", "12abc"});
  EXPECT_EQ(as_i64(kv.apply(k_a, add("/x", 1)).reply), 13);
  kv.apply(k_a, {Op::set, "/y", " 7"});
  EXPECT_EQ(as_i64(kv.apply(k_a, add("/y", 1)).reply), 8);
}

TEST(StoreKvState, AddOnNonNumberClosesConnection) {
  KvState kv;
  kv.apply(k_a, {Op::set, "/x", "hello"});
  const auto fx = kv.apply(k_a, add("/x", 1));
  ASSERT_TRUE(fx.close_reason);
  EXPECT_EQ(*fx.close_reason, "ADD on non-integer value of key '/x'");
  EXPECT_EQ(kv.value("/x"), "hello");
}

TEST(StoreKvState, AddOverflowClosesConnection) {
  KvState kv;
  kv.apply(k_a, {Op::set, "/x", "9223372036854775807"});
  EXPECT_TRUE(kv.apply(k_a, add("/x", 1)).close_reason);
}

TEST(StoreKvState, CompareSetFollowsCapturedTable) {
  KvState kv;
  EXPECT_EQ(kv.apply(k_a, {Op::compare_set, "/cs", "", "new"}).reply, bytes_reply("new"));
  EXPECT_EQ(kv.apply(k_a, {Op::compare_set, "/cs2", "zzz", "new"}).reply, bytes_reply("zzz"));
  EXPECT_FALSE(kv.value("/cs2"));
  EXPECT_EQ(kv.apply(k_a, {Op::compare_set, "/cs", "new", "newer"}).reply, bytes_reply("newer"));
  EXPECT_EQ(kv.apply(k_a, {Op::compare_set, "/cs", "wrong", "x"}).reply, bytes_reply("newer"));
}

TEST(StoreKvState, WaitOnExistingKeysAnswersAtOnce) {
  KvState kv;
  kv.apply(k_a, {Op::set, "/a", "1"});
  EXPECT_EQ(kv.apply(k_a, wait_for({"/a"})).reply, k_stop);
  EXPECT_EQ(kv.apply(k_a, wait_for({})).reply, k_stop);
}

TEST(StoreKvState, MultiKeyWaitAnswersAfterLastKey) {
  KvState kv;
  EXPECT_TRUE(kv.apply(k_a, wait_for({"/k_a", "/k_b"})).reply.empty());
  EXPECT_TRUE(kv.apply(k_b, {Op::set, "/k_a", "1"}).deliveries.empty());
  const auto fx = kv.apply(k_b, {Op::set, "/k_b", "1"});
  ASSERT_EQ(fx.deliveries.size(), 1U);
  EXPECT_EQ(fx.deliveries[0].conn, k_a);
  EXPECT_EQ(fx.deliveries[0].bytes, k_stop);
  EXPECT_EQ(kv.parked_waits(), 0U);
}

TEST(StoreKvState, DuplicateKeyReleasedByOneSet) {
  KvState kv;
  kv.apply(k_a, wait_for({"/d", "/d"}));
  EXPECT_EQ(kv.apply(k_b, {Op::set, "/d", "1"}).deliveries.size(), 1U);
}

TEST(StoreKvState, EveryWritingOpWakesWaiters) {
  const std::vector<Request> writers = {{Op::set, "/w", "1"},
                                        add("/w", 1),
                                        {Op::append, "/w", "x"},
                                        {Op::compare_set, "/w", "", "c"}};
  for (const auto& writer : writers) {
    KvState kv;
    kv.apply(k_a, wait_for({"/w"}));
    EXPECT_EQ(kv.apply(k_b, writer).deliveries.size(), 1U) << to_string(writer.op);
  }
  KvState kv;
  kv.apply(k_a, wait_for({"/w"}));
  Request ms{Op::multi_set};
  ms.pairs = {{"/other", "1"}, {"/w", "2"}};
  EXPECT_EQ(kv.apply(k_b, ms).deliveries.size(), 1U);
}

TEST(StoreKvState, CompareSetThatStoresNothingWakesNobody) {
  KvState kv;
  kv.apply(k_a, wait_for({"/w"}));
  EXPECT_TRUE(kv.apply(k_b, {Op::compare_set, "/w", "zzz", "c"}).deliveries.empty());
  EXPECT_EQ(kv.parked_waits(), 1U);
}

TEST(StoreKvState, DeleteDoesNotAffectWaiters) {
  KvState kv;
  kv.apply(k_a, {Op::set, "/k", "v"});
  kv.apply(k_b, wait_for({"/other"}));
  EXPECT_EQ(as_i64(kv.apply(k_a, {Op::delete_key, "/k"}).reply), 1);
  EXPECT_EQ(as_i64(kv.apply(k_a, {Op::delete_key, "/k"}).reply), 0);
  EXPECT_EQ(kv.parked_waits(), 1U);
}

TEST(StoreKvState, CheckReportsReadiness) {
  KvState kv;
  kv.apply(k_a, {Op::set, "/x", "hello"});
  Request check{Op::check};
  check.keys = {"/x"};
  EXPECT_EQ(kv.apply(k_a, check).reply, from_hex("00"));
  check.keys = {"/x", "/nope"};
  EXPECT_EQ(kv.apply(k_a, check).reply, from_hex("01"));
  check.keys = {};
  EXPECT_EQ(kv.apply(k_a, check).reply, from_hex("00"));
}

TEST(StoreKvState, NumKeysCountsEverything) {
  KvState kv;
  kv.apply(k_a, add("init/", 1));
  kv.apply(k_a, {Op::set, "/a", "1"});
  EXPECT_EQ(as_i64(kv.apply(k_a, {Op::get_num_keys}).reply), 2);
}

TEST(StoreKvState, CancelWaitDropsRegistrationsAndAnswersCanceled) {
  KvState kv;
  kv.apply(k_a, wait_for({"/w"}));
  EXPECT_EQ(kv.apply(k_a, {Op::cancel_wait}).reply, from_hex("01"));
  EXPECT_EQ(kv.parked_waits(), 0U);
  EXPECT_TRUE(kv.apply(k_b, {Op::set, "/w", "1"}).deliveries.empty());
  EXPECT_EQ(kv.apply(k_a, {Op::cancel_wait}).reply, from_hex("01"));
}

TEST(StoreKvState, DisconnectDropsWaitersAndWatchers) {
  KvState kv;
  kv.apply(k_a, wait_for({"/w", "/v"}));
  kv.apply(k_a, {Op::watch_key, "/w"});
  kv.disconnect(k_a);
  EXPECT_EQ(kv.parked_waits(), 0U);
  EXPECT_EQ(kv.watcher_count(), 0U);
  EXPECT_TRUE(kv.apply(k_b, {Op::set, "/w", "1"}).deliveries.empty());
}

TEST(StoreKvState, StaleWaitStillGetsLateStopWaiting) {
  KvState kv;  // a 1.13 client timed out locally; the server keeps the registration
  kv.apply(k_a, wait_for({"/never"}));
  const auto fx = kv.apply(k_a, {Op::set, "/never", "now"});
  ASSERT_EQ(fx.deliveries.size(), 1U);
  EXPECT_EQ(fx.deliveries[0].conn, k_a);
}

TEST(StoreKvState, ParkedWaitLimitClosesConnection) {
  KvState kv(KvLimits{2, k_output_hard_limit_bytes});
  kv.apply(k_a, wait_for({"/1"}));
  kv.apply(k_a, wait_for({"/2"}));
  const auto fx = kv.apply(k_a, wait_for({"/3"}));
  ASSERT_TRUE(fx.close_reason);
  EXPECT_EQ(*fx.close_reason, "more than 2 parked waits on one connection");
}

TEST(StoreKvState, ParkedWaitsOverAllConnectionsAreCapped) {
  KvState kv(KvLimits{k_max_parked_waits_per_connection, k_output_hard_limit_bytes, 2});
  kv.apply(k_a, wait_for({"/1"}));
  kv.apply(k_b, wait_for({"/2"}));
  const auto fx = kv.apply(3, wait_for({"/3"}));
  ASSERT_TRUE(fx.close_reason);
  EXPECT_EQ(*fx.close_reason, "parked waits at the server's cap of 2");
  EXPECT_EQ(kv.parked_waits(), 2U);
}

TEST(StoreKvState, BytesCountStoredKeysValuesAndQueueItems) {
  KvState kv;
  kv.apply(k_a, {Op::set, "/k", "abc"});
  EXPECT_EQ(kv.bytes(), 5U);
  kv.apply(k_a, {Op::set, "/k", "a"});
  EXPECT_EQ(kv.bytes(), 3U);
  kv.apply(k_a, {Op::append, "/k", "bc"});
  EXPECT_EQ(kv.bytes(), 5U);
  kv.apply(k_a, {Op::queue_push, "q", "12345"});
  EXPECT_EQ(kv.bytes(), 10U);
  kv.apply(k_a, {Op::queue_pop, "q"});
  kv.apply(k_a, {Op::delete_key, "/k"});
  EXPECT_EQ(kv.bytes(), 0U);
  kv.apply(k_a, add("/n/1", 7));
  kv.erase_prefix("/n/");
  EXPECT_EQ(kv.bytes(), 0U);
}

TEST(StoreKvState, WatchKeyFollowsCapturedEvents) {
  KvState kv;
  EXPECT_EQ(kv.apply(k_b, {Op::watch_key, "/wk"}).reply, from_hex("03"));
  auto fx = kv.apply(k_a, {Op::set, "/wk", "v1"});
  ASSERT_EQ(fx.deliveries.size(), 1U);
  EXPECT_EQ(fx.deliveries[0].bytes, encode_watch_event(reply::k_key_created, "/wk", "", "v1"));
  fx = kv.apply(k_a, {Op::compare_set, "/wk", "v1", "v3"});
  EXPECT_EQ(fx.deliveries.at(0).bytes, encode_watch_event(reply::k_key_updated, "/wk", "v1", "v3"));
  fx = kv.apply(k_a, {Op::delete_key, "/wk"});
  EXPECT_EQ(fx.deliveries.at(0).bytes, encode_watch_event(reply::k_key_deleted, "/wk", "v3", ""));
}

TEST(StoreKvState, MultiGetAnswersInOrderWithEmptyForMissing) {
  KvState kv;
  kv.apply(k_a, {Op::set, "/a", "1"});
  Request mg{Op::multi_get};
  mg.keys = {"/missing", "/a"};
  EXPECT_EQ(kv.apply(k_a, mg).reply, bytes_reply("") + bytes_reply("1"));
}

TEST(StoreKvState, OversizedMultiGetReplyClosesConnection) {
  KvState kv(KvLimits{8, 20});
  kv.apply(k_a, {Op::set, "/a", std::string(10, 'x')});
  Request mg{Op::multi_get};
  mg.keys = {"/a", "/a"};
  const auto fx = kv.apply(k_a, mg);
  ASSERT_TRUE(fx.close_reason);
  EXPECT_EQ(*fx.close_reason, "MULTI_GET reply of 36 bytes exceeds 20");
  EXPECT_TRUE(fx.reply.empty());
}

TEST(StoreKvState, AppendCreatesThenConcatenates) {
  KvState kv;
  kv.apply(k_a, {Op::append, "/ap", "ab"});
  kv.apply(k_a, {Op::append, "/ap", "cd"});
  EXPECT_EQ(kv.value("/ap"), "abcd");
}

TEST(StoreKvState, QueuePushPopLenAndWakeOne) {
  KvState kv;
  kv.apply(k_a, wait_for({"q"}));
  kv.apply(k_b, wait_for({"q"}));
  auto fx = kv.apply(k_a, {Op::queue_push, "q", "x"});
  ASSERT_EQ(fx.deliveries.size(), 1U);
  EXPECT_EQ(fx.deliveries[0].conn, k_a);
  kv.apply(k_a, {Op::queue_push, "q", "y"});
  EXPECT_EQ(as_i64(kv.apply(k_a, {Op::queue_len, "q"}).reply), 2);
  fx = kv.apply(k_a, {Op::queue_pop, "q"});
  std::string expected;
  put_i64(expected, 2);
  put_bytes(expected, "x");
  EXPECT_EQ(fx.reply, expected);
  Request check{Op::check};
  check.keys = {"q"};
  EXPECT_EQ(kv.apply(k_a, check).reply, from_hex("00"));  // non-empty queue counts as a key
  kv.apply(k_a, {Op::queue_pop, "q"});
  EXPECT_EQ(as_i64(kv.apply(k_a, {Op::queue_pop, "q"}).reply), 0);
  EXPECT_EQ(kv.num_keys(), 0U);
}

TEST(StoreKvState, ListKeysReturnsWholeMap) {
  KvState kv;
  kv.apply(k_a, {Op::set, "/a", "1"});
  const auto reply = kv.apply(k_a, {Op::list_keys}).reply;
  std::string expected;
  put_i64(expected, 1);
  put_bytes(expected, "/a");
  EXPECT_EQ(reply, expected);
}

// Regression (decoder_fuzz): a BARRIER on a key holding INT64_MAX overflowed the counter.
TEST(StoreKvState, BarrierOnAFullCounterClosesTheConnection) {
  KvState kv;
  kv.apply(k_a, {Op::set, "/b", "9223372036854775807"});
  Request barrier{Op::barrier, "/b"};
  barrier.number = 2;
  const auto fx = kv.apply(k_a, barrier);
  EXPECT_EQ(fx.close_reason, "BARRIER overflows key '/b'");
  EXPECT_TRUE(fx.reply.empty());
}

TEST(StoreKvState, BarrierReleasesAllAtWorldSize) {
  KvState kv;
  Request barrier{Op::barrier, "/b"};
  barrier.number = 2;
  EXPECT_TRUE(kv.apply(k_a, barrier).reply.empty());
  const auto fx = kv.apply(k_b, barrier);
  EXPECT_EQ(fx.reply, k_stop);
  ASSERT_EQ(fx.deliveries.size(), 1U);
  EXPECT_EQ(fx.deliveries[0].conn, k_a);
  EXPECT_EQ(kv.value("/b"), "2");
}

TEST(StoreKvState, PingEchoesNonce) {
  KvState kv;
  Request ping{Op::ping};
  ping.word = 0x01020304;
  EXPECT_EQ(to_hex(kv.apply(k_a, ping).reply), "04 03 02 01");
}

TEST(StoreStollPrefix, ParsesLikeStdStoll) {
  EXPECT_EQ(parse_stoll_prefix("42"), 42);
  EXPECT_EQ(parse_stoll_prefix("  -7x"), -7);
  EXPECT_EQ(parse_stoll_prefix("+3"), 3);
  EXPECT_EQ(parse_stoll_prefix("abc"), std::nullopt);
  EXPECT_EQ(parse_stoll_prefix("-"), std::nullopt);
  EXPECT_EQ(parse_stoll_prefix("99999999999999999999"), std::nullopt);
}

TEST(StoreKvState, ErasePrefixRemovesOnlyThatPrefix) {
  KvState kv;
  kv.apply(k_a, {Op::set, "/worker/attempt_0/a", "1"});
  kv.apply(k_a, {Op::set, "/worker/attempt_0/b", "2"});
  kv.apply(k_a, {Op::set, "ddprun/rdzv/x/state", "s"});
  EXPECT_EQ(kv.erase_prefix("/worker/"), 2u);
  EXPECT_EQ(kv.num_keys(), 1u);
  EXPECT_EQ(kv.value("ddprun/rdzv/x/state"), "s");
  EXPECT_EQ(kv.erase_prefix("/worker/"), 0u);
}

}  // namespace
}  // namespace ddprun::store
