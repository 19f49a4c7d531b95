// StoreKv's pool against a real store server on the same io_context: short operations share
// the node's one connection (a store host serves thousands of nodes within its descriptors),
// and no operation waits for a blocking get.

#include "ddprun/rdzv/store_kv.hpp"

#include "ddprun/store/kv_state.hpp"
#include "ddprun/store/server.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "component/rdzv/harness.hpp"

namespace ddprun::rdzv {
namespace {

using namespace std::chrono_literals;
using test::run_until;
using test::start;

class StoreKvPool : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.listen("127.0.0.1", 0));
    store::ClientOptions options;
    options.port = server_.port();
    kv_ = std::make_unique<StoreKv>(ctx_, options);
    auto connected = start(ctx_, kv_->connect());
    ASSERT_TRUE(run_until(ctx_, [&] { return connected->has_value(); }));
    ASSERT_TRUE(connected->value());
  }

  asio::io_context ctx_;
  store::Server server_{ctx_};
  std::unique_ptr<StoreKv> kv_;
};

TEST_F(StoreKvPool, ConcurrentShortOperationsShareOneConnection) {
  std::vector<test::Slot<Result<void>>> sets;
  std::vector<test::Slot<Result<std::vector<std::string>>>> gets;
  for (int i = 0; i < 8; ++i) {
    sets.push_back(start(ctx_, kv_->multi_set({{"hb/" + std::to_string(i), "1"}})));
    gets.push_back(start(ctx_, kv_->multi_get_now({"state", "hb/0"})));
  }
  ASSERT_TRUE(run_until(ctx_, [&] {
    return std::all_of(sets.begin(), sets.end(), [](const auto& s) { return s->has_value(); }) &&
           std::all_of(gets.begin(), gets.end(), [](const auto& g) { return g->has_value(); });
  }));
  for (const auto& s : sets) {
    EXPECT_TRUE(s->value());
  }
  EXPECT_EQ(kv_->open_connections(), 1U) << "16 overlapping calls, queued on one client";
  EXPECT_EQ(server_.connection_count(), 1U);
}

TEST_F(StoreKvPool, AShortOperationDoesNotWaitForABlockingGet) {
  auto blocked = start(ctx_, kv_->get("rank/1", 20s));
  ASSERT_TRUE(run_until(ctx_, [&] { return server_.state().parked_waits() == 1; }));
  auto beat = start(ctx_, kv_->multi_set({{"hb/me", "1"}}));
  ASSERT_TRUE(run_until(ctx_, [&] { return beat->has_value(); }));
  EXPECT_TRUE(beat->value());
  EXPECT_FALSE(blocked->has_value()) << "the heartbeat went first, on a second connection";
  EXPECT_EQ(kv_->open_connections(), 2U);
  auto release = start(ctx_, kv_->set("rank/1", "assigned"));
  ASSERT_TRUE(run_until(ctx_, [&] { return blocked->has_value() && release->has_value(); }));
  ASSERT_TRUE(blocked->value());
  EXPECT_EQ(*blocked->value(), "assigned");
}

}  // namespace
}  // namespace ddprun::rdzv
