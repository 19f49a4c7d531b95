#include "ddprun/etcd/endpoints.hpp"

#include <gtest/gtest.h>

using namespace ddprun::etcd;

TEST(EtcdEndpoints, ParsesListWithDefaultPortAndSchemes) {
  auto e = parse_endpoints("etcd1,etcd2:2400, https://etcd3/ ,http://[::1]:2379");
  ASSERT_TRUE(e) << e.error().message;
  ASSERT_EQ(e->size(), 4U);
  EXPECT_EQ((*e)[0], (Endpoint{"etcd1", 2379, false}));
  EXPECT_EQ((*e)[1], (Endpoint{"etcd2", 2400, false}));
  EXPECT_EQ((*e)[2], (Endpoint{"etcd3", 2379, true}));
  EXPECT_EQ((*e)[3], (Endpoint{"::1", 2379, false}));
}

TEST(EtcdEndpoints, DefaultTlsAppliesOnlyWithoutScheme) {
  auto e = parse_endpoints("a:1,http://b:2", true);
  ASSERT_TRUE(e);
  EXPECT_TRUE((*e)[0].tls);
  EXPECT_FALSE((*e)[1].tls);
}

TEST(EtcdEndpoints, RendersUrlsAndHostHeaders) {
  EXPECT_EQ(to_string(Endpoint{"h", 2379, true}), "https://h:2379");
  EXPECT_EQ(host_header(Endpoint{"::1", 12, false}), "[::1]:12");
  EXPECT_EQ(to_string(std::vector<Endpoint>{{"a", 1, false}, {"::1", 2, true}}),
            "http://a:1,https://[::1]:2");
  EXPECT_EQ(to_string(std::vector<Endpoint>{}), "");
}

TEST(EtcdEndpoints, RejectsBadEntriesNamingThem) {
  const std::pair<const char*, const char*> rows[] = {
      {"", "etcd endpoints: empty list"},
      {"a,,b", "etcd endpoints \"a,,b\": an empty entry"},
      {"h:abc", "etcd endpoint \"h:abc\": port \"abc\" is not a number in 1..65535"},
      {"h:0", "etcd endpoint \"h:0\": port \"0\" is not a number in 1..65535"},
      {"h:70000", "etcd endpoint \"h:70000\": port \"70000\" is not a number in 1..65535"},
      {"h:", "etcd endpoint \"h:\": empty port"},
      {"grpc://h", "etcd endpoint \"grpc://h\": scheme \"grpc\" is not http or https"},
      {"http://h/v3",
       "etcd endpoint \"http://h/v3\": a path is not allowed (the client adds /v3/...)"},
      {"http://:2379", "etcd endpoint \"http://:2379\": no host"},
      {"[::1", "etcd endpoint \"[::1\": unclosed '[' in the IPv6 address"},
  };
  for (const auto& [text, message] : rows) {
    auto e = parse_endpoints(text);
    ASSERT_FALSE(e) << text;
    EXPECT_EQ(e.error().message, message);
    EXPECT_EQ(e.error().code, ddprun::ErrorCode::config);
  }
}
