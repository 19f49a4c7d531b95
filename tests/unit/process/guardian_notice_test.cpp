#include "ddprun/process/guardian_notice.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using namespace ddprun::process;

namespace {

/// A notice message as Guardian::notice sends it: the op, then the payload.
std::vector<unsigned char> notice_bytes(const std::string& payload) {
  std::vector<unsigned char> out(k_guard_op_size + payload.size());
  const auto op = static_cast<std::int32_t>(GuardMessage::Op::notice);
  std::memcpy(out.data(), &op, sizeof op);
  std::memcpy(out.data() + k_guard_op_size, payload.data(), payload.size());
  return out;
}

std::vector<unsigned char> clear_bytes() {
  std::vector<unsigned char> out(k_guard_op_size);
  const auto op = static_cast<std::int32_t>(GuardMessage::Op::clear_notice);
  std::memcpy(out.data(), &op, sizeof op);
  return out;
}

std::string held(const HeldNotice& n) {
  return {reinterpret_cast<const char*>(n.data()), n.size()};
}

}  // namespace

TEST(GuardNotice, DecodesAPayloadInPlace) {
  auto bytes = notice_bytes("{\"run\":\"job\"}");
  auto m = decode_guard_message(bytes.data(), bytes.size());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->op, GuardMessage::Op::notice);
  EXPECT_EQ(m->payload, bytes.data() + k_guard_op_size);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(m->payload), m->payload_size),
            "{\"run\":\"job\"}");
}

TEST(GuardNotice, RejectsEmptyAndOversizedNoticesAndAClearWithBytes) {
  auto empty = notice_bytes("");
  EXPECT_FALSE(decode_guard_message(empty.data(), empty.size()));
  auto largest = notice_bytes(std::string(k_max_notice_bytes, 'x'));
  EXPECT_TRUE(decode_guard_message(largest.data(), largest.size()));
  auto too_large = notice_bytes(std::string(k_max_notice_bytes + 1, 'x'));
  EXPECT_FALSE(decode_guard_message(too_large.data(), too_large.size()));
  auto clear = clear_bytes();
  EXPECT_TRUE(decode_guard_message(clear.data(), clear.size()));
  clear.push_back(0);
  EXPECT_FALSE(decode_guard_message(clear.data(), clear.size()));
  EXPECT_FALSE(decode_guard_message(clear.data(), 3));
}

TEST(GuardNotice, HeldNoticeIsReplacedAndCleared) {
  HeldNotice n;
  EXPECT_TRUE(n.empty());
  for (const std::string payload : {"round 1", "a longer payload for round 2", "r3"}) {
    auto bytes = notice_bytes(payload);
    n.apply(*decode_guard_message(bytes.data(), bytes.size()));
    EXPECT_EQ(held(n), payload);
  }
  auto clear = clear_bytes();
  n.apply(*decode_guard_message(clear.data(), clear.size()));
  EXPECT_TRUE(n.empty());
}

TEST(GuardNotice, GroupsAndNoticeIgnoreEachOthersMessages) {
  HeldNotice n;
  GuardedGroups g;
  auto watch = encode_guard_message({GuardMessage::Op::watch, 42});
  auto m = decode_guard_message(watch.data(), watch.size());
  ASSERT_TRUE(m);
  n.apply(*m);
  EXPECT_TRUE(n.empty());
  auto bytes = notice_bytes("payload");
  auto notice = decode_guard_message(bytes.data(), bytes.size());
  ASSERT_TRUE(notice);
  EXPECT_TRUE(g.apply(*notice));
  EXPECT_EQ(g.size(), 0u);
}
