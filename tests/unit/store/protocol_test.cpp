// Opcode tables, encoders and codec round-trips for every op of every dialect.

#include "ddprun/store/protocol.hpp"

#include <gtest/gtest.h>

#include "support/hex.hpp"

namespace ddprun::store {
namespace {

using test::from_hex;
using test::to_hex;

constexpr std::array k_all_ops{Op::validate,  Op::set,         Op::compare_set, Op::get,
                               Op::add,       Op::check,       Op::wait,        Op::get_num_keys,
                               Op::watch_key, Op::delete_key,  Op::append,      Op::multi_get,
                               Op::multi_set, Op::cancel_wait, Op::ping,        Op::queue_push,
                               Op::queue_pop, Op::queue_len,   Op::list_keys,   Op::barrier};

Request sample(Op op) {
  Request r{op};
  switch (op) {
    case Op::validate:
      r.word = k_validation_magic;
      break;
    case Op::ping:
      r.word = 4242;
      break;
    case Op::set:
    case Op::append:
    case Op::queue_push:
      r.key = "/k";
      r.value = std::string("v\0\xff", 3);
      break;
    case Op::compare_set:
      r.key = "/cs";
      r.value = "old";
      r.desired = "new";
      break;
    case Op::add:
    case Op::barrier:
      r.key = "/cnt";
      r.number = -10;
      break;
    case Op::check:
    case Op::wait:
    case Op::multi_get:
      r.keys = {"/a", "", "/b"};
      break;
    case Op::multi_set:
      r.pairs = {{"/a", "1"}, {"/b", ""}};
      break;
    case Op::get:
    case Op::watch_key:
    case Op::delete_key:
    case Op::queue_pop:
    case Op::queue_len:
      r.key = "/q";
      break;
    case Op::get_num_keys:
    case Op::cancel_wait:
    case Op::list_keys:
      break;
  }
  return r;
}

TEST(StoreOpcodes, D0TableMatchesCapturedNumbers) {
  EXPECT_EQ(op_from_byte(Dialect::d0, 0), Op::set);
  EXPECT_EQ(op_from_byte(Dialect::d0, 4), Op::check);
  EXPECT_EQ(op_from_byte(Dialect::d0, 7), Op::watch_key);
  EXPECT_EQ(op_from_byte(Dialect::d0, 8), Op::delete_key);
  EXPECT_EQ(op_from_byte(Dialect::d0, 9), std::nullopt);
}

TEST(StoreOpcodes, D1TableRenumbersAfterWatchKeyRemoval) {
  EXPECT_EQ(op_from_byte(Dialect::d1, 7), Op::delete_key);
  EXPECT_EQ(op_from_byte(Dialect::d1, 8), Op::append);
  EXPECT_EQ(op_from_byte(Dialect::d1, 11), Op::cancel_wait);
  EXPECT_EQ(op_from_byte(Dialect::d1, 12), std::nullopt);
}

TEST(StoreOpcodes, D2TableStartsWithValidate) {
  EXPECT_EQ(op_from_byte(Dialect::d2, 0), Op::validate);
  EXPECT_EQ(op_from_byte(Dialect::d2, 1), Op::set);
  EXPECT_EQ(op_from_byte(Dialect::d2, 13), Op::ping);
  EXPECT_EQ(op_from_byte(Dialect::d2, 17), Op::list_keys);
  EXPECT_EQ(op_from_byte(Dialect::d2, 18), Op::barrier);
  EXPECT_EQ(op_from_byte(Dialect::d2, 19), std::nullopt);
  EXPECT_EQ(byte_from_op(Dialect::d2, Op::queue_pop), 15);
}

TEST(StoreEncode, SetMatchesCapturedBytes) {
  const auto bytes = encode_request(Dialect::d0, Request{Op::set, "/k1", "v1"});
  ASSERT_TRUE(bytes);
  EXPECT_EQ(to_hex(*bytes), "00 03 00 00 00 00 00 00 00 2f 6b 31 02 00 00 00 00 00 00 00 76 31");
}

TEST(StoreEncode, NegativeAddMatchesCapturedBytes) {
  Request r{Op::add, "/cnt"};
  r.number = -10;
  const auto bytes = encode_request(Dialect::d0, r);
  ASSERT_TRUE(bytes);
  EXPECT_EQ(*bytes, from_hex("03 04 00 00 00 00 00 00 00 2f 63 6e 74 f6 ff ff ff ff ff ff ff"));
}

TEST(StoreEncode, TwoKeyWaitMatchesCapturedBytes) {
  Request r{Op::wait};
  r.keys = {"/cnt", "/cs"};
  const auto bytes = encode_request(Dialect::d0, r);
  ASSERT_TRUE(bytes);
  EXPECT_EQ(*bytes, from_hex("05 02 00 00 00 00 00 00 00 04 00 00 00 00 00 00 00 2f 63 6e 74 03 00"
                             " 00 00 00 00 00 00 2f 63 73"));
}

TEST(StoreEncode, CompareSetMatchesCapturedBytes) {
  Request r{Op::compare_set, "/cs", "new", "newer"};
  EXPECT_EQ(*encode_request(Dialect::d0, r),
            from_hex("01 03 00 00 00 00 00 00 00 2f 63 73 03 00 00 00 00 00 00 00 6e 65 77 05 00"
                     " 00 00 00 00 00 00 6e 65 77 65 72"));
}

TEST(StoreEncode, D2UsesShiftedOpcodes) {
  EXPECT_EQ((*encode_request(Dialect::d2, Request{Op::set, "/k", "v"}))[0], '\x01');
  EXPECT_EQ(to_hex(encode_validate()), "00 ce f7 85 3c");
}

TEST(StoreEncode, RejectsOpMissingFromDialect) {
  const auto r = encode_request(Dialect::d0, Request{Op::list_keys});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "store: LIST_KEYS does not exist in dialect D0");
  EXPECT_FALSE(encode_request(Dialect::d1, Request{Op::watch_key, "/k"}));
}

TEST(StoreEncode, WatchEventMatchesCapturedBytes) {
  EXPECT_EQ(encode_watch_event(reply::k_key_created, "/wk", "", "v1"),
            from_hex("01 03 00 00 00 00 00 00 00 2f 77 6b 00 00 00 00 00 00 00 00 02 00 00 00 00"
                     " 00 00 00 76 31"));
}

void expect_round_trip(Dialect dialect) {
  for (Op op : k_all_ops) {
    const auto bytes = encode_request(dialect, sample(op));
    if (!bytes) {
      EXPECT_FALSE(byte_from_op(dialect, op)) << to_string(op);
      continue;
    }
    Decoder decoder({}, dialect == Dialect::d2 ? Dialect::legacy_auto : dialect);
    if (dialect == Dialect::d2) {
      decoder.feed(encode_validate());
    }
    decoder.feed(*bytes);
    const auto result = decoder.next();
    ASSERT_EQ(result.status, DecodeStatus::request) << to_string(op) << ": " << result.error;
    EXPECT_EQ(result.request, sample(op)) << to_string(op);
    EXPECT_EQ(decoder.buffered(), 0U) << to_string(op);
  }
}

TEST(StoreCodec, RoundTripsEveryD0Op) { expect_round_trip(Dialect::d0); }
TEST(StoreCodec, RoundTripsEveryD1Op) { expect_round_trip(Dialect::d1); }
TEST(StoreCodec, RoundTripsEveryD2Op) { expect_round_trip(Dialect::d2); }

TEST(StoreLogging, LoggableKeyTruncatesAndEscapes) {
  EXPECT_EQ(loggable_key(std::string("/a\x01", 3)), "/a\\x01");
  const std::string long_key(100, 'k');
  EXPECT_EQ(loggable_key(long_key), std::string(64, 'k') + "...(100 bytes)");
}

}  // namespace
}  // namespace ddprun::store
