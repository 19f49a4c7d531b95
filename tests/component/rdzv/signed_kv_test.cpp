// SignedKv: the rendezvous token on a store every agent writes directly (etcd-v3).
#include "ddprun/rdzv/signed_kv.hpp"

#include <gtest/gtest.h>

#include "component/rdzv/harness.hpp"

namespace ddprun::rdzv {
namespace {

using namespace std::chrono_literals;
using test::run;
using test::run_until;
using test::start;

TEST(SignedKv, KeepsTcpStoreSemanticsOverSignedEntries) {
  asio::io_context ctx;
  MemoryKv store(ctx);
  SignedKv kv(store, "secret");
  EXPECT_EQ(*run(ctx, kv.compare_set("k", "x", "y")), "x");  // missing, expected not empty
  EXPECT_EQ(*run(ctx, kv.compare_set("k", "", "v1")), "v1");
  EXPECT_EQ(*run(ctx, kv.compare_set("k", "nope", "v2")), "v1");
  EXPECT_EQ(*run(ctx, kv.compare_set("k", "v1", "v2")), "v2");
  EXPECT_NE(store.peek("k"), std::optional<std::string>("v2")) << "stored signed";
  EXPECT_TRUE(run(ctx, kv.set("s", "text")));
  EXPECT_EQ(*run(ctx, kv.get("s", 1s)), "text");
  EXPECT_EQ(*run(ctx, kv.multi_get_now({"s", "none", "k"})),
            (std::vector<std::string>{"text", "", "v2"}));
  EXPECT_EQ(*run(ctx, kv.add("n", 2)), 2);
  EXPECT_EQ(*run(ctx, kv.add("n", 3)), 5);
  EXPECT_TRUE(run(ctx, kv.multi_set({{"a", "1"}, {"b", "2"}})));
  EXPECT_EQ(*run(ctx, kv.multi_get_now({"a", "b", "n"})),
            (std::vector<std::string>{"1", "2", "5"}));
}

TEST(SignedKv, EntriesWithoutTheTokenAreRefusedNamingTheKey) {
  asio::io_context ctx;
  MemoryKv store(ctx);
  SignedKv mine(store, "secret");
  SignedKv theirs(store, "other");
  store.poke("plain", "v");
  EXPECT_TRUE(run(ctx, theirs.set("foreign", "v")));
  for (const char* key : {"plain", "foreign"}) {
    auto got = run(ctx, mine.multi_get_now({key}));
    ASSERT_FALSE(got) << key;
    EXPECT_EQ(got.error().code, ErrorCode::config);
    EXPECT_NE(got.error().message.find(key), std::string::npos) << got.error().message;
  }
  EXPECT_TRUE(is_signed_entry(*store.peek("foreign")));
  EXPECT_TRUE(is_signed_entry(sign_entry("t", "k", "00ff", "")));
  EXPECT_FALSE(is_signed_entry("v"));
  EXPECT_FALSE(is_signed_entry(R"({"round":0})"));
  EXPECT_FALSE(is_signed_entry(std::string(64, 'x') + "::v")) << "not a hex MAC";
  EXPECT_FALSE(is_signed_entry(std::string(64, 'a') + ":v")) << "no nonce";
  // A signed value moved to another key does not verify either.
  store.poke("moved", *store.peek("foreign"));
  EXPECT_FALSE(run(ctx, theirs.get("moved", 1s)));
  EXPECT_FALSE(run(ctx, mine.add("plain", 1)));
}

TEST(SignedKv, ConcurrentAddsCountEveryIncrementOnce) {
  asio::io_context ctx;
  MemoryKv store(ctx);
  SignedKv a(store, "secret");
  SignedKv b(store, "secret");
  auto x = start(ctx, a.add("n", 1));
  auto y = start(ctx, b.add("n", 1));
  auto z = start(ctx, a.add("n", 1));
  ASSERT_TRUE(run_until(ctx, [&] { return x->has_value() && y->has_value() && z->has_value(); }));
  std::vector<std::int64_t> got{***x, ***y, ***z};
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::int64_t>{1, 2, 3}));
}

}  // namespace
}  // namespace ddprun::rdzv
