// The client's dialect probes (dialect_probe.hpp) and the hello policies that let ddprun's server
// behave like PyTorch's own servers (spec §6.1, §2.9).

#include "ddprun/store/dialect_probe.hpp"

#include <gtest/gtest.h>

#include "support/hex.hpp"

namespace ddprun::store {
namespace {

using test::from_hex;

TEST(StoreDialectProbe, VerdictTable) {
  using O = ProbeOutcome;
  struct Row {
    Probe probe;
    O outcome;
    std::optional<Dialect> dialect;
    std::optional<Probe> next;
    bool reuse;
  };
  const Row rows[] = {
      {Probe::validate_ping, O::answered, Dialect::d2, std::nullopt, true},
      {Probe::validate_ping, O::closed, std::nullopt, Probe::cancel_wait, false},
      {Probe::validate_ping, O::silent, std::nullopt, std::nullopt, false},
      {Probe::cancel_wait, O::answered, Dialect::d1, std::nullopt, true},
      {Probe::cancel_wait, O::closed, std::nullopt, Probe::num_keys, false},
      {Probe::cancel_wait, O::silent, Dialect::d2, std::nullopt, false},
      {Probe::num_keys, O::answered, Dialect::d0, std::nullopt, true},
      {Probe::num_keys, O::closed, Dialect::d2, std::nullopt, false},
      {Probe::num_keys, O::silent, std::nullopt, std::nullopt, false},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(std::string(describe(row.probe)) + " outcome " +
                 std::to_string(static_cast<int>(row.outcome)));
    const auto v = judge_probe(row.probe, row.outcome);
    EXPECT_EQ(v.dialect, row.dialect);
    EXPECT_EQ(v.next, row.next);
    EXPECT_EQ(v.reuse, row.reuse);
  }
}

TEST(StoreDialectProbe, RequestBytes) {
  EXPECT_EQ(probe_request(Probe::validate_ping, 0x12345678),
            from_hex("00 ce f7 85 3c 0d 78 56 40 12"));
  EXPECT_EQ(probe_request(Probe::cancel_wait, 1), from_hex("0b"));
  EXPECT_EQ(probe_request(Probe::num_keys, 1), from_hex("06"));
}

TEST(StoreDialectProbe, ReplyMustBeTheDialectsAnswer) {
  EXPECT_TRUE(probe_reply_ok(Probe::validate_ping, 0x12345678, from_hex("78 56 40 12")));
  EXPECT_FALSE(probe_reply_ok(Probe::validate_ping, 0x12345678, from_hex("78 56 34 12")));
  EXPECT_FALSE(probe_reply_ok(Probe::validate_ping, 0x12345678, from_hex("78 56 40")));
  EXPECT_TRUE(probe_reply_ok(Probe::cancel_wait, 0, from_hex("01")));
  EXPECT_FALSE(probe_reply_ok(Probe::cancel_wait, 0, from_hex("00")));
  EXPECT_TRUE(probe_reply_ok(Probe::num_keys, 0, from_hex("03 00 00 00 00 00 00 00")));
  EXPECT_FALSE(probe_reply_ok(Probe::num_keys, 0, from_hex("ff ff ff ff ff ff ff ff")));
}

/// A legacy server reads the VALIDATE+PING probe as a SET whose key length it can never
/// allocate (>= 2^62 bytes), whatever the nonce: it resets instead of waiting for the key.
TEST(StoreDialectProbe, LegacyServerRefusesTheFirstProbeAtOnce) {
  for (const std::uint32_t nonce : {0U, 1U, 0xFFFFFFFFU, 0x0000FFFFU}) {
    const std::string bytes = probe_request(Probe::validate_ping, nonce);
    ASSERT_EQ(bytes.size(), 10U);
    EXPECT_GE(get_u64(std::string_view(bytes).substr(1, 8)), std::uint64_t{1} << 62);
    Decoder legacy({}, Dialect::d0, HelloPolicy::legacy_only);
    legacy.feed(bytes);
    const auto r = legacy.next();
    EXPECT_EQ(r.status, DecodeStatus::error);
    EXPECT_NE(r.error.find("key of"), std::string::npos) << r.error;
  }
}

TEST(StoreHelloPolicy, ValidateOnlyRefusesALegacyFirstMessage) {
  Decoder strict({}, Dialect::legacy_auto, HelloPolicy::validate_only);
  strict.feed(from_hex("06"));  // GETNUMKEYS, no hello
  EXPECT_EQ(strict.next().status, DecodeStatus::unvalidated);
  EXPECT_EQ(strict.next().status, DecodeStatus::error);  // stays failed
}

TEST(StoreHelloPolicy, ValidateOnlyServesAfterTheHello) {
  Decoder strict({}, Dialect::legacy_auto, HelloPolicy::validate_only);
  strict.feed(from_hex("00 ce f7 85"));
  EXPECT_EQ(strict.next().status, DecodeStatus::need_more);
  strict.feed(from_hex("3c 07"));  // D2 GETNUMKEYS
  const auto r = strict.next();
  ASSERT_EQ(r.status, DecodeStatus::request);
  EXPECT_EQ(r.request.op, Op::get_num_keys);
  EXPECT_EQ(strict.dialect(), Dialect::d2);
}

TEST(StoreHelloPolicy, LegacyOnlyDecodesAsItsDialectFromTheFirstByte) {
  Decoder d1({}, Dialect::d1, HelloPolicy::legacy_only);
  d1.feed(from_hex("0b"));
  EXPECT_EQ(d1.next().request.op, Op::cancel_wait);
  Decoder d0({}, Dialect::d0, HelloPolicy::legacy_only);
  d0.feed(from_hex("0b"));
  EXPECT_EQ(d0.next().status, DecodeStatus::error);
}

}  // namespace
}  // namespace ddprun::store
