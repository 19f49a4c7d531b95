#include "ddprun/rdzv/settings.hpp"

#include <gtest/gtest.h>

namespace ddprun::rdzv {
namespace {

using Conf = std::map<std::string, std::string>;

TEST(RdzvSettings, DefaultsAreTorchrun) {
  auto s = parse_rdzv_settings({}, "job", 1, 4);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->run_id, "job");
  EXPECT_EQ(s->min_nodes, 1);
  EXPECT_EQ(s->max_nodes, 4);
  EXPECT_EQ(s->join_timeout, std::chrono::seconds(600));
  EXPECT_EQ(s->last_call_timeout, std::chrono::seconds(30));
  EXPECT_EQ(s->close_timeout, std::chrono::seconds(30));
  EXPECT_EQ(s->keep_alive_interval, std::chrono::seconds(5));
  EXPECT_EQ(s->keep_alive_max_attempt, 3);
  EXPECT_EQ(s->heartbeat_timeout, std::chrono::seconds(5));
  EXPECT_EQ(s->read_timeout, std::chrono::seconds(60));
  EXPECT_EQ(s->max_node_failures, 2);
}

TEST(RdzvSettings, ParsesEveryKnownKey) {
  Conf conf{{"join_timeout", "10"},
            {"last_call_timeout", "2"},
            {"close_timeout", "3"},
            {"keep_alive_interval", "4"},
            {"keep_alive_max_attempt", "6"},
            {"heartbeat_timeout", "7"},
            {"read_timeout", "8"},
            {"max_node_failures", "0"},
            {"is_host", "1"},
            {"store_type", "tcp"},
            {"timeout", "900"},
            {"rank", "0"},
            {"use_libuv", "0"},
            {"token_file", "x"}};
  auto s = parse_rdzv_settings(conf, "job", 2, 2);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->join_timeout, std::chrono::seconds(10));
  EXPECT_EQ(s->last_call_timeout, std::chrono::seconds(2));
  EXPECT_EQ(s->close_timeout, std::chrono::seconds(3));
  EXPECT_EQ(s->keep_alive_interval, std::chrono::seconds(4));
  EXPECT_EQ(s->keep_alive_max_attempt, 6);
  EXPECT_EQ(s->heartbeat_timeout, std::chrono::seconds(7));
  EXPECT_EQ(s->read_timeout, std::chrono::seconds(8));
  EXPECT_EQ(s->max_node_failures, 0);
}

TEST(RdzvSettings, SkipsKeysOfOtherModules) {
  // token_file, is_host, timeout... are read elsewhere; config::read_rdzv_conf filters the rest.
  auto s = parse_rdzv_settings({{"token_file", "x"}, {"other", "y"}}, "job", 1, 1);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->join_timeout, std::chrono::seconds(600));
}

struct BadCase {
  Conf conf;
  int min_nodes;
  int max_nodes;
  const char* message;
};

TEST(RdzvSettings, RejectsBadValues) {
  const BadCase cases[] = {
      {{{"join_timeout", "-1"}}, 1, 1, "The join timeout (-1) must be positive."},
      {{{"last_call_timeout", "0"}}, 1, 1, "The last call timeout (0) must be positive."},
      {{{"close_timeout", "0"}}, 1, 1, "The close timeout (0) must be positive."},
      {{{"keep_alive_max_attempt", "0"}}, 1, 1, "The keep-alive max attempt (0) must be positive."},
      {{{"join_timeout", "1.5"}},
       1,
       1,
       "rdzv_conf 'join_timeout=1.5': expected a whole number of seconds"},
      {{{"max_node_failures", "33"}},
       1,
       1,
       "rdzv_conf 'max_node_failures=33': expected a whole number of failed rounds from 0 "
       "(never leave a node out) to 32"},
      {{{"max_node_failures", "-1"}},
       1,
       1,
       "rdzv_conf 'max_node_failures=-1': expected a whole number of failed rounds from 0 "
       "(never leave a node out) to 32"},
      {{}, 0, 1, "nnodes 0:1: expected 1 <= MIN <= MAX"},
      {{}, 3, 2, "nnodes 3:2: expected 1 <= MIN <= MAX"},
  };
  for (const auto& c : cases) {
    auto s = parse_rdzv_settings(c.conf, "job", c.min_nodes, c.max_nodes);
    ASSERT_FALSE(s) << c.message;
    EXPECT_EQ(s.error().code, ErrorCode::config);
    EXPECT_EQ(s.error().message, c.message);
  }
}

}  // namespace
}  // namespace ddprun::rdzv
