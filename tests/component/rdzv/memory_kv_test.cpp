#include "ddprun/rdzv/kv.hpp"

#include <gtest/gtest.h>

#include "component/rdzv/harness.hpp"

namespace ddprun::rdzv {
namespace {

using namespace std::chrono_literals;
using test::run;
using test::run_until;
using test::start;

TEST(MemoryKv, CompareSetFollowsTcpStore) {
  asio::io_context ctx;
  MemoryKv kv(ctx);
  EXPECT_EQ(*run(ctx, kv.compare_set("k", "x", "y")), "x");  // missing, expected not empty
  EXPECT_FALSE(kv.peek("k").has_value());
  EXPECT_EQ(*run(ctx, kv.compare_set("k", "", "v1")), "v1");      // missing, expected empty: create
  EXPECT_EQ(*run(ctx, kv.compare_set("k", "nope", "v2")), "v1");  // mismatch: current value
  EXPECT_EQ(*run(ctx, kv.compare_set("k", "v1", "v2")), "v2");
  EXPECT_EQ(kv.peek("k"), std::optional<std::string>("v2"));
}

TEST(MemoryKv, MultiGetNowAddAndSet) {
  asio::io_context ctx;
  MemoryKv kv(ctx);
  EXPECT_EQ(*run(ctx, kv.multi_get_now({"k"})), std::vector<std::string>{""}) << "missing";
  EXPECT_TRUE(run(ctx, kv.set("k", "v")));
  EXPECT_EQ(*run(ctx, kv.multi_get_now({"k", "x"})), (std::vector<std::string>{"v", ""}));
  EXPECT_EQ(*run(ctx, kv.add("n", 2)), 2);
  EXPECT_EQ(*run(ctx, kv.add("n", 0)), 2);
  EXPECT_EQ(*run(ctx, kv.add("n", -3)), -1);
  auto bad = run(ctx, kv.add("k", 1));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::protocol);
}

TEST(MemoryKv, BlockingGetWakesOnSet) {
  asio::io_context ctx;
  MemoryKv kv(ctx);
  auto got = start(ctx, kv.get("k", 10s));
  EXPECT_FALSE(run_until(
      ctx, [&] { return got->has_value(); }, 50ms));
  kv.poke("k", "here");
  ASSERT_TRUE(run_until(ctx, [&] { return got->has_value(); }));
  EXPECT_EQ(got->value().value(), "here");
}

TEST(MemoryKv, BlockingGetTimesOut) {
  asio::io_context ctx;
  MemoryKv kv(ctx);
  auto r = run(ctx, kv.get("k", 30ms));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::timeout);
}

TEST(MemoryKv, FailAllFailsEveryCall) {
  asio::io_context ctx;
  MemoryKv kv(ctx);
  kv.fail_all(true);
  EXPECT_FALSE(run(ctx, kv.multi_get_now({"k"})));
  EXPECT_FALSE(run(ctx, kv.set("k", "v")));
  EXPECT_FALSE(run(ctx, kv.add("k", 1)));
  EXPECT_FALSE(run(ctx, kv.compare_set("k", "", "v")));
  EXPECT_FALSE(run(ctx, kv.get("k", 10ms)));
}

}  // namespace
}  // namespace ddprun::rdzv
