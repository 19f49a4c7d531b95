// Incremental decoding, dialect detection (spec §6.2) and malformed-frame tables.

#include "ddprun/store/protocol.hpp"

#include <gtest/gtest.h>

#include "support/hex.hpp"

namespace ddprun::store {
namespace {

using test::from_hex;

// Client->server bytes of the spec §7.1 capture (1.13 client), in recv() order.
const char* const k_capture_71 =
    "00 03 00 00 00 00 00 00 00 2f 6b 31 02 00 00 00 00 00 00 00 76 31"
    "05 01 00 00 00 00 00 00 00 03 00 00 00 00 00 00 00 2f 6b 31"
    "02 03 00 00 00 00 00 00 00 2f 6b 31"
    "03 04 00 00 00 00 00 00 00 2f 63 6e 74 05 00 00 00 00 00 00 00"
    "01 03 00 00 00 00 00 00 00 2f 63 73 00 00 00 00 00 00 00 00 03 00 00 00 00 00 00 00 6e 65 77"
    "06"
    "05 01 00 00 00 00 00 00 00 06 00 00 00 00 00 00 00 2f 6e 65 76 65 72";

std::vector<Request> drain(Decoder& d) {
  std::vector<Request> out;
  for (auto r = d.next(); r.status == DecodeStatus::request; r = d.next()) {
    out.push_back(r.request);
  }
  return out;
}

TEST(StoreDecoder, DecodesCapturedLegacyStreamInOneChunk) {
  Decoder d;
  d.feed(from_hex(k_capture_71));
  const auto reqs = drain(d);
  ASSERT_EQ(reqs.size(), 7U);
  EXPECT_EQ(reqs[0], (Request{Op::set, "/k1", "v1"}));
  EXPECT_EQ(reqs[1].op, Op::wait);
  EXPECT_EQ(reqs[1].keys, std::vector<std::string>{"/k1"});
  EXPECT_EQ(reqs[2], (Request{Op::get, "/k1"}));
  EXPECT_EQ(reqs[3].number, 5);
  EXPECT_EQ(reqs[4], (Request{Op::compare_set, "/cs", "", "new"}));
  EXPECT_EQ(reqs[5].op, Op::get_num_keys);
  EXPECT_EQ(reqs[6].keys, std::vector<std::string>{"/never"});
  EXPECT_EQ(d.dialect(), Dialect::legacy_auto);
}

TEST(StoreDecoder, DecodesOneByteAtATime) {
  const std::string bytes = from_hex(k_capture_71);
  Decoder d;
  std::vector<Request> reqs;
  for (char c : bytes) {
    d.feed(std::string_view(&c, 1));
    auto more = drain(d);
    reqs.insert(reqs.end(), more.begin(), more.end());
  }
  ASSERT_EQ(reqs.size(), 7U);
  EXPECT_EQ(reqs[4], (Request{Op::compare_set, "/cs", "", "new"}));
}

TEST(StoreDecoder, DetectsValidateHelloAsD2) {
  Decoder d;
  d.feed(from_hex("00 ce"));
  EXPECT_EQ(d.next().status, DecodeStatus::need_more);
  d.feed(from_hex("f7 85 3c 0d 39 30 00 00"));
  const auto r = d.next();
  ASSERT_EQ(r.status, DecodeStatus::request);
  EXPECT_EQ(r.request.op, Op::ping);
  EXPECT_EQ(r.request.word, 0x3039U);
  EXPECT_EQ(d.dialect(), Dialect::d2);
}

TEST(StoreDecoder, LegacySetStartingWithZeroIsNotHello) {
  Decoder d;
  d.feed(from_hex("00 02 00 00 00"));
  EXPECT_EQ(d.next().status, DecodeStatus::need_more);
  d.feed(from_hex("00 00 00 00 2f 78 01 00 00 00 00 00 00 00 31"));
  const auto r = d.next();
  ASSERT_EQ(r.status, DecodeStatus::request);
  EXPECT_EQ(r.request, (Request{Op::set, "/x", "1"}));
  EXPECT_EQ(d.dialect(), Dialect::legacy_auto);
}

TEST(StoreDecoder, Opcode7FirstIsD0WatchKey) {
  Decoder d;
  d.feed(from_hex("07 03 00 00 00 00 00 00 00 2f 77 6b"));
  const auto r = d.next();
  ASSERT_EQ(r.status, DecodeStatus::request);
  EXPECT_EQ(r.request, (Request{Op::watch_key, "/wk"}));
  EXPECT_EQ(d.dialect(), Dialect::d0);
}

TEST(StoreDecoder, Opcode7LaterIsD1DeleteKey) {
  Decoder d;
  d.feed(from_hex("06 07 01 00 00 00 00 00 00 00 6b"));
  EXPECT_EQ(d.next().request.op, Op::get_num_keys);
  const auto r = d.next();
  EXPECT_EQ(r.request, (Request{Op::delete_key, "k"}));
  EXPECT_EQ(d.dialect(), Dialect::d1);
}

TEST(StoreDecoder, Opcode9MarksD1MultiGet) {
  Decoder d;
  d.feed(from_hex("09 01 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 6b"));
  const auto r = d.next();
  EXPECT_EQ(r.request.op, Op::multi_get);
  EXPECT_EQ(d.dialect(), Dialect::d1);
}

TEST(StoreDecoder, Opcode8FollowedByBytesIsAppend) {
  Decoder d;
  d.feed(from_hex("08 01 00 00 00 00 00 00 00 6b 02 00 00 00 00 00 00 00 78 79"));
  const auto r = d.next();
  EXPECT_EQ(r.request, (Request{Op::append, "k", "xy"}));
  EXPECT_EQ(d.dialect(), Dialect::d1);
}

TEST(StoreDecoder, Opcode8ThenSilenceIsDeleteKey) {
  Decoder d;
  d.feed(from_hex("08 03 00 00 00 00 00 00 00 2f 6b 31"));
  EXPECT_EQ(d.next().status, DecodeStatus::ambiguous);
  d.resolve_silence();
  const auto r = d.next();
  EXPECT_EQ(r.request, (Request{Op::delete_key, "/k1"}));
  EXPECT_EQ(d.dialect(), Dialect::d0);
  d.feed(from_hex("08 01 00 00 00 00 00 00 00 6b"));
  EXPECT_EQ(d.next().request, (Request{Op::delete_key, "k"}));  // D0 now fixed
}

TEST(StoreDecoder, Opcode8KeyInTwoPiecesThenSilenceLeavesNoStaleNeed) {
  Decoder d;
  d.feed(from_hex("08 03 00 00 00 00 00 00 00 2f"));  // key incomplete: the decoder waits
  EXPECT_EQ(d.next().status, DecodeStatus::need_more);
  d.feed(from_hex("6b 31"));
  EXPECT_EQ(d.next().status, DecodeStatus::ambiguous);
  d.resolve_silence();
  EXPECT_EQ(d.next().request, (Request{Op::delete_key, "/k1"}));
  d.feed(from_hex("06"));  // a 1-byte GETNUMKEYS must decode at once
  EXPECT_EQ(d.next().request.op, Op::get_num_keys);
  EXPECT_EQ(d.buffered(), 0U);
}

TEST(StoreDecoder, Opcode8AmbiguousThenMoreBytesIsAppend) {
  Decoder d;
  d.feed(from_hex("08 01 00 00 00 00 00 00 00 6b"));
  EXPECT_EQ(d.next().status, DecodeStatus::ambiguous);
  d.feed(from_hex("01 00 00 00"));
  EXPECT_EQ(d.next().status, DecodeStatus::need_more);
  d.feed(from_hex("00 00 00 00 7a"));
  EXPECT_EQ(d.next().request, (Request{Op::append, "k", "z"}));
}

TEST(StoreDecoder, ForcedD0TreatsOpcode8AsDelete) {
  Decoder d({}, Dialect::d0);
  d.feed(from_hex("08 01 00 00 00 00 00 00 00 6b"));
  EXPECT_EQ(d.next().request, (Request{Op::delete_key, "k"}));
}

struct MalformedCase {
  const char* name;
  Dialect forced;
  const char* hex;
  const char* error;
};

void PrintTo(const MalformedCase& c, std::ostream* os) { *os << c.name; }

class StoreDecoderMalformed : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(StoreDecoderMalformed, FailsWithMessage) {
  const auto& c = GetParam();
  DecodeLimits limits;
  limits.max_key_bytes = 16;
  limits.max_value_bytes = 32;
  limits.max_keys_per_request = 4;
  limits.max_request_bytes = 50;
  Decoder d(limits, c.forced);
  d.feed(from_hex(c.hex));
  auto r = d.next();
  while (r.status == DecodeStatus::request) {
    r = d.next();
  }
  ASSERT_EQ(r.status, DecodeStatus::error) << c.name;
  EXPECT_EQ(r.error, c.error) << c.name;
  EXPECT_EQ(d.next().status, DecodeStatus::error) << "decoder stays failed";
}

INSTANTIATE_TEST_SUITE_P(
    Table, StoreDecoderMalformed,
    ::testing::Values(
        MalformedCase{"UnknownLegacyOpcode", Dialect::legacy_auto, "13",
                      "unknown opcode 0x13 in legacy dialect"},
        MalformedCase{"D1OpcodeInForcedD0", Dialect::d0, "09 00",
                      "unknown opcode 0x09 in dialect D0"},
        MalformedCase{"PerMessageMagicVariant", Dialect::legacy_auto, "ce f7 85 3c 01",
                      "unknown opcode 0xce in legacy dialect"},
        MalformedCase{"KeyLengthTwoPow40", Dialect::legacy_auto, "00 00 00 00 00 00 01 00 00",
                      "key of 1099511627776 bytes exceeds 16"},
        MalformedCase{"ValueOverLimit", Dialect::legacy_auto,
                      "00 01 00 00 00 00 00 00 00 6b 21 00 00 00 00 00 00 00",
                      "value of 33 bytes exceeds 32"},
        MalformedCase{"TooManyKeys", Dialect::legacy_auto, "05 05 00 00 00 00 00 00 00",
                      "5 keys in one request exceeds 4"},
        MalformedCase{"CountWithHighBit", Dialect::legacy_auto, "04 00 00 00 00 00 00 00 80",
                      "9223372036854775808 keys in one request exceeds 4"},
        MalformedCase{"WrongValidateMagic", Dialect::legacy_auto, "00 ce f7 85 3c 00 11 22 33 44",
                      "VALIDATE magic 0x44332211, expected 0x3c85f7ce"},
        MalformedCase{"UnknownD2Opcode", Dialect::legacy_auto, "00 ce f7 85 3c 13",
                      "unknown opcode 0x13 in dialect D2"},
        MalformedCase{"RequestOverTotalLimit", Dialect::legacy_auto,
                      "0a 04 00 00 00 00 00 00 00"
                      " 01 00 00 00 00 00 00 00 61 20 00 00 00 00 00 00 00",
                      "MULTI_SET of 58 bytes exceeds 50"}),
    [](const ::testing::TestParamInfo<MalformedCase>& p) { return p.param.name; });

TEST(StoreDecoder, SkipsReparseUntilDeclaredBytesArrive) {
  Decoder d;
  d.feed(from_hex("00 01 00 00 00 00 00 00 00 6b 04 00 00 00 00 00 00 00"));
  EXPECT_EQ(d.next().status, DecodeStatus::need_more);
  d.feed("ab");
  EXPECT_EQ(d.next().status, DecodeStatus::need_more);
  d.feed("cd");
  EXPECT_EQ(d.next().request, (Request{Op::set, "k", "abcd"}));
}

}  // namespace
}  // namespace ddprun::store
