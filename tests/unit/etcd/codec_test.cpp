// Requests and replies as measured against Debian's etcd 3.4 (../shared/spec/etcd-v3.md).

#include "ddprun/etcd/codec.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace ddprun::etcd;
using nlohmann::json;

TEST(EtcdBase64, RoundTripsEveryPaddingLength) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("/j/n2"), "L2ovbjI=");
  EXPECT_EQ(base64_encode("hi"), "aGk=");
  EXPECT_EQ(base64_encode("abc"), "YWJj");
  EXPECT_EQ(base64_encode("a"), "YQ==");
  const std::string binary("\0\xff\x10 z", 5);
  EXPECT_EQ(*base64_decode(base64_encode(binary)), binary);
  EXPECT_EQ(*base64_decode("YQ=="), "a");
}

TEST(EtcdBase64, RejectsMalformedText) {
  EXPECT_FALSE(base64_decode("abc"));
  EXPECT_FALSE(base64_decode("a!bc"));
  EXPECT_FALSE(base64_decode("a=bc"));
  EXPECT_FALSE(base64_decode("YQ==YWJj"));
  EXPECT_EQ(base64_decode("a!bc").error().message, "base64 \"a!bc\": bad character at 1");
}

TEST(EtcdPrefix, IncrementsLastByteBelowFf) {
  EXPECT_EQ(prefix_end("/j/"), "/j0");
  EXPECT_EQ(prefix_end(std::string("a\xff", 2)), "b");
  EXPECT_EQ(prefix_end(std::string("\xff\xff", 2)), std::string(1, '\0'));
}

TEST(EtcdRequests, RendersInt64AsStringsAndOmitsDefaults) {
  EXPECT_EQ(json::parse(render_put({"/k", "v", 0})), (json{{"key", "L2s="}, {"value", "dg=="}}));
  EXPECT_EQ(json::parse(render_put({"/k", "v", 2694738287214859016})),
            (json{{"key", "L2s="}, {"value", "dg=="}, {"lease", "2694738287214859016"}}));
  EXPECT_EQ(json::parse(render_range({"/j/", prefix_end("/j/"), 0, 7, false})),
            (json{{"key", "L2ov"}, {"range_end", "L2ow"}, {"revision", "7"}}));
  EXPECT_EQ(json::parse(render_lease_grant(std::chrono::seconds(5), 0)), (json{{"TTL", "5"}}));
  EXPECT_EQ(json::parse(render_lease_grant(std::chrono::seconds(5), 4611686018427387903)),
            (json{{"TTL", "5"}, {"ID", "4611686018427387903"}}));
  EXPECT_EQ(json::parse(render_lease_id(-3)), (json{{"ID", "-3"}}));
  EXPECT_EQ(json::parse(render_watch_create({"/k", {}, 0, false, true})),
            (json{{"create_request", {{"key", "L2s="}, {"filters", json::array({"NOPUT"})}}}}));
  EXPECT_EQ(json::parse(render_watch_create({"/j/", "/j0", 4, false})),
            (json{{"create_request",
                   {{"key", "L2ov"}, {"range_end", "L2ow"}, {"start_revision", "4"}}}}));
}

TEST(EtcdRequests, RendersTxnCompareOperandUnderTheTargetName) {
  TxnRequest t{{key_absent("/a"), key_unchanged("/b", 9), value_is("/c", "x")},
               {TxnOp::set({"/a", "1", 0})},
               {TxnOp::get({"/a", "", 0, 0, false}), TxnOp::erase({"/d", ""})}};
  const json j = json::parse(render_txn(t));
  EXPECT_EQ(
      j["compare"][0],
      (json{{"key", "L2E="}, {"target", "CREATE"}, {"result", "EQUAL"}, {"create_revision", "0"}}));
  EXPECT_EQ(j["compare"][1]["mod_revision"], "9");
  EXPECT_EQ(j["compare"][1]["target"], "MOD");
  EXPECT_EQ(j["compare"][2]["value"], "eA==");
  EXPECT_EQ(j["success"][0], (json{{"request_put", {{"key", "L2E="}, {"value", "MQ=="}}}}));
  EXPECT_EQ(j["failure"][0], (json{{"request_range", {{"key", "L2E="}}}}));
  EXPECT_EQ(j["failure"][1], (json{{"request_delete_range", {{"key", "L2Q="}}}}));
}

TEST(EtcdReplies, ReadsRangeWithAbsentFieldsAsDefaults) {
  auto r = parse_range_reply(
      R"({"header":{"cluster_id":"1","revision":"12"},"kvs":[{"key":"L2ovbjI=","create_revision":"4","mod_revision":"5","version":"2","value":"aGk=","lease":"2694738287214859016"}],"count":"1"})");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->revision, 12);
  EXPECT_EQ(r->count, 1);
  ASSERT_EQ(r->kvs.size(), 1U);
  EXPECT_EQ(r->kvs[0].key, "/j/n2");
  EXPECT_EQ(r->kvs[0].value, "hi");
  EXPECT_EQ(r->kvs[0].mod_revision, 5);
  EXPECT_EQ(r->kvs[0].lease, 2694738287214859016);
  auto empty = parse_range_reply(R"({"header":{"revision":"3"}})");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->kvs.empty());
  EXPECT_EQ(empty->count, 0);
}

TEST(EtcdReplies, FailedTxnHasNoSucceededField) {
  auto t = parse_txn_reply(
      R"({"header":{"revision":"8"},"responses":[{"response_range":{"header":{"revision":"8"},"kvs":[{"key":"L2E=","value":"MQ==","mod_revision":"2","create_revision":"2","version":"1"}],"count":"1"}}]})");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_FALSE(t->succeeded);
  EXPECT_EQ(t->revision, 8);
  ASSERT_EQ(t->responses.size(), 1U);
  EXPECT_EQ(t->responses[0].kind, TxnOp::Kind::range);
  EXPECT_EQ(t->responses[0].range.kvs.at(0).value, "1");
  auto ok = parse_txn_reply(
      R"({"header":{"revision":"9"},"succeeded":true,"responses":[{"response_put":{"header":{}}},{"response_delete_range":{"deleted":"2"}}]})");
  ASSERT_TRUE(ok);
  EXPECT_TRUE(ok->succeeded);
  EXPECT_EQ(ok->responses[1].deleted, 2);
}

TEST(EtcdReplies, ReadsLeasesAndKeepalives) {
  auto g = parse_lease_grant_reply(
      R"({"header":{"revision":"1"},"ID":"2324035748919835653","TTL":"5"})");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->id, 2324035748919835653);
  EXPECT_EQ(g->ttl, std::chrono::seconds(5));
  // A lease that expired: the keepalive answer has no TTL.
  auto lost = parse_keepalive_reply(R"({"result":{"header":{"revision":"1"},"ID":"12345"}})");
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->ttl, std::chrono::seconds(0));
}

TEST(EtcdReplies, ReadsWatchMessagesAsSeen) {
  auto created = parse_watch_message(R"({"result":{"header":{"revision":"3"},"created":true}})");
  ASSERT_TRUE(created);
  EXPECT_TRUE(created->created);
  EXPECT_EQ(created->revision, 3);
  auto put = parse_watch_message(
      R"({"result":{"header":{"revision":"4"},"events":[{"kv":{"key":"L2ovbjI=","create_revision":"4","mod_revision":"4","version":"1","value":"aGk="}}]}})");
  ASSERT_TRUE(put);
  ASSERT_EQ(put->events.size(), 1U);
  EXPECT_EQ(put->events[0].type, WatchEvent::Type::put);
  EXPECT_EQ(put->events[0].kv.value, "hi");
  auto del = parse_watch_message(
      R"({"result":{"header":{"revision":"5"},"events":[{"type":"DELETE","kv":{"key":"L2ovbjI=","mod_revision":"5"}}]}})");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->events.at(0).type, WatchEvent::Type::del);
  EXPECT_EQ(del->events.at(0).kv.mod_revision, 5);
  // Compacted start revision: a cancel with no header revision.
  auto compacted = parse_watch_message(
      R"({"result":{"header":{"raft_term":"2"},"canceled":true,"compact_revision":"3"}})");
  ASSERT_TRUE(compacted);
  EXPECT_TRUE(compacted->canceled);
  EXPECT_EQ(compacted->compact_revision, 3);
}

TEST(EtcdReplies, MalformedRepliesAreOneLineErrorsNamingTheCall) {
  auto r = parse_range_reply(R"({"kvs":[{"key":"%%%%"}]})");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "etcd kv/range: malformed reply: field \"key\": base64 \"%%%%\": bad character at 0");
  EXPECT_FALSE(parse_put_reply("not json"));
  EXPECT_FALSE(parse_txn_reply(R"({"header":{"revision":"x"}})"));
  EXPECT_FALSE(parse_authenticate_reply("{}"));
  auto stream_error = parse_watch_message(R"({"error":{"grpc_code":14,"message":"boom"}})");
  ASSERT_FALSE(stream_error);
  EXPECT_EQ(stream_error.error().message, "etcd watch: stream error: boom (code 14)");
}

TEST(EtcdErrors, ReadsErrorBodiesAndDecidesFailover) {
  auto e = parse_server_error(
      404,
      R"({"error":"etcdserver: requested lease not found","message":"etcdserver: requested lease not found","code":5})");
  EXPECT_EQ(e.grpc_code, k_grpc_not_found);
  EXPECT_EQ(e.message, "etcdserver: requested lease not found");
  EXPECT_FALSE(should_fail_over(e));
  EXPECT_TRUE(
      should_fail_over(parse_server_error(503, R"({"error":"etcdserver: no leader","code":14})")));
  EXPECT_TRUE(should_fail_over(
      parse_server_error(500, R"({"error":"etcdserver: request timed out","code":2})")));
  EXPECT_TRUE(should_fail_over(parse_server_error(502, "Bad Gateway\n")));
  EXPECT_EQ(parse_server_error(502, "Bad Gateway\n").message, "Bad Gateway ");
  EXPECT_FALSE(should_fail_over(
      parse_server_error(403, R"({"error":"etcdserver: permission denied","code":7})")));
  EXPECT_TRUE(is_stale_token(
      parse_server_error(401, R"({"error":"etcdserver: invalid auth token","code":16})")));
  EXPECT_FALSE(is_stale_token(e));
}

TEST(EtcdErrors, AnOverloadedMemberIsAskedAgainAfterAGrowingSpreadPause) {
  const auto busy =
      parse_server_error(500, R"({"error":"etcdserver: too many requests","code":2})");
  EXPECT_TRUE(is_overloaded(busy));
  EXPECT_FALSE(should_fail_over(busy)) << "every member shares the overload: pause instead";
  EXPECT_TRUE(is_overloaded(parse_server_error(429, R"({"error":"slow down","code":8})")));
  EXPECT_FALSE(
      is_overloaded(parse_server_error(503, R"({"error":"etcdserver: no leader","code":14})")));
  EXPECT_EQ(overload_pause(0, 1.0), std::chrono::milliseconds(100));
  EXPECT_EQ(overload_pause(3, 1.0), std::chrono::milliseconds(800));
  EXPECT_EQ(overload_pause(1, 0.5), std::chrono::milliseconds(100));
  EXPECT_EQ(overload_pause(1, 9.0), std::chrono::milliseconds(300)) << "spread is clamped";
  std::chrono::milliseconds all{0};
  for (int i = 0; i < k_max_overload_resends; ++i) {
    all += overload_pause(i, 1.0);
  }
  EXPECT_EQ(all, std::chrono::milliseconds(3100));
}

TEST(EtcdRequests, ATxnOfRangesOnlyIsReadOnly) {
  TxnRequest reads{
      {}, {TxnOp::get({"/a", {}, 0, 0, false})}, {TxnOp::get({"/b", {}, 0, 0, false})}};
  EXPECT_TRUE(is_read_only(reads));
  EXPECT_TRUE(is_read_only(TxnRequest{}));
  TxnRequest writes = reads;
  writes.failure.push_back(TxnOp::set({"/c", "1", 0}));
  EXPECT_FALSE(is_read_only(writes));
  EXPECT_FALSE(is_read_only(TxnRequest{{}, {TxnOp::erase({"/d", {}})}, {}}));
}

TEST(EtcdStream, TakesCompleteLinesAndKeepsTheRest) {
  std::string buffer = "{\"a\":1}\n\r\n{\"b\":2}\r\n{\"c\"";
  const auto lines = take_lines(buffer);
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_EQ(lines[0], "{\"a\":1}");
  EXPECT_EQ(lines[1], "{\"b\":2}");
  EXPECT_EQ(buffer, "{\"c\"");
  EXPECT_TRUE(take_lines(buffer).empty());
}
