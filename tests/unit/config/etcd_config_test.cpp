// --rdzv-backend etcd-v3: the backend name, the endpoint list and the etcd --rdzv-conf keys.
#include "ddprun/cli/args.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/config/rdzv_conf.hpp"
#include "ddprun/sched/detect.hpp"

#include <gtest/gtest.h>

using namespace ddprun;
using namespace ddprun::config;

namespace {

Result<LaunchConfig> resolve_args(const std::vector<std::string>& args) {
  const util::Env env;
  auto parsed = cli::parse_args(args, env);
  if (!parsed) {
    return parsed.error();
  }
  HostFacts host;
  host.cpu_count = 4;
  host.random_run_id = "r";
  return resolve(*parsed, env, host, sched::Detected{});
}

std::vector<std::string> etcd_args(std::vector<std::string> extra) {
  std::vector<std::string> args = {"--nnodes=2", "--rdzv_backend=etcd-v3", "--rdzv_id=job42"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back("t.py");
  return args;
}

std::string error_of(const std::vector<std::string>& args) {
  auto cfg = resolve_args(args);
  return cfg ? std::string("(accepted)") : cfg.error().message;
}

TEST(EtcdConfig, ReadsTheMemberListWithDefaultPortAndScheme) {
  auto cfg = resolve_args(etcd_args(
      {"--rdzv_endpoint=etcd1,https://etcd2:2389,http://[::1]", "--rdzv_conf=cacert=ca"}));
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->rdzv.rdzv_backend, RdzvBackend::etcd_v3);
  EXPECT_EQ(to_string(cfg->rdzv.rdzv_backend), "etcd-v3");
  ASSERT_EQ(cfg->rdzv.etcd.endpoints.size(), 3u);
  EXPECT_EQ(cfg->rdzv.etcd.endpoints[0], (etcd::Endpoint{"etcd1", 2379, false}));
  EXPECT_EQ(cfg->rdzv.etcd.endpoints[1], (etcd::Endpoint{"etcd2", 2389, true}));
  EXPECT_EQ(cfg->rdzv.etcd.endpoints[2], (etcd::Endpoint{"::1", 2379, false}));
  EXPECT_EQ(cfg->rdzv.rdzv_endpoint.host, "etcd1");
  EXPECT_EQ(cfg->rdzv.rdzv_endpoint.port, 2379);
  EXPECT_EQ(cfg->rdzv.etcd.ca_file, "ca");
  EXPECT_EQ(cfg->rdzv.etcd.key_prefix, "/ddprun/rdzv");
  EXPECT_EQ(cfg->rdzv.etcd.end_record_ttl, std::chrono::seconds(3600)) << "an hour by default";
  EXPECT_TRUE(cfg->rdzv.port_candidates.empty());
}

TEST(EtcdConfig, TheEndRecordsTtlIsAnRdzvConfKey) {
  auto cfg = resolve_args(etcd_args({"--rdzv_endpoint=a", "--rdzv_conf=end_record_ttl=600"}));
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->rdzv.etcd.end_record_ttl, std::chrono::seconds(600));
  EXPECT_TRUE(cfg->warnings.empty());
}

TEST(EtcdConfig, ProtocolHttpsMakesBareEntriesTls) {
  auto cfg = resolve_args(etcd_args({"--rdzv_endpoint=a,http://b",
                                     "--rdzv_conf=protocol=https,cert=c.pem,key=k.pem,"
                                     "key_prefix=/jobs/,username=u,password_file=/p"}));
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_TRUE(cfg->rdzv.etcd.endpoints[0].tls);
  EXPECT_FALSE(cfg->rdzv.etcd.endpoints[1].tls);
  EXPECT_EQ(cfg->rdzv.etcd.cert_file, "c.pem");
  EXPECT_EQ(cfg->rdzv.etcd.key_file, "k.pem");
  EXPECT_EQ(cfg->rdzv.etcd.key_prefix, "/jobs");
  EXPECT_EQ(cfg->rdzv.etcd.username, "u");
  EXPECT_EQ(cfg->rdzv.etcd.password_file, "/p");
  EXPECT_TRUE(cfg->warnings.empty());
}

TEST(EtcdConfig, RefusesBadSettingsInOneLine) {
  struct Row {
    std::vector<std::string> extra;
    std::string needle;
  } rows[] = {
      {{}, "--rdzv-endpoint '': expected the etcd members"},
      {{"--rdzv_endpoint=a:99999"}, "--rdzv-endpoint 'a:99999': expected etcd members"},
      {{"--rdzv_endpoint=ftp://a"}, "is not http or https"},
      {{"--rdzv_endpoint=a,,b"}, "an empty entry"},
      {{"--rdzv_endpoint=a", "--rdzv_conf=protocol=grpc"},
       "'protocol=grpc': expected protocol=http or"},
      {{"--rdzv_endpoint=a", "--rdzv_conf=cert=c.pem"}, "expected cert and key together"},
      {{"--rdzv_endpoint=a", "--rdzv_conf=username=u"},
       "expected username and password_file together"},
      {{"--rdzv_endpoint=a", "--rdzv_conf=key_prefix=/"}, "expected a key_prefix other than"},
      {{"--rdzv_endpoint=a", "--rdzv_conf=end_record_ttl=0"},
       "'end_record_ttl=0': expected end_record_ttl=SECONDS, a whole number from 1 to 604800"},
      {{"--rdzv_endpoint=a", "--rdzv_conf=end_record_ttl=1h"}, "expected end_record_ttl=SECONDS"},
  };
  for (const auto& r : rows) {
    const auto message = error_of(etcd_args(r.extra));
    EXPECT_NE(message.find(r.needle), std::string::npos) << message;
  }
}

TEST(EtcdConfig, TorchrunsV2BackendsPointToEtcdV3) {
  for (const char* name : {"etcd", "etcd-v2"}) {
    const auto message = error_of({"--rdzv_backend", name, "t.py"});
    EXPECT_NE(message.find("use --rdzv-backend etcd-v3"), std::string::npos) << message;
    EXPECT_NE(message.find("v2 API"), std::string::npos) << message;
  }
  const auto other = error_of({"--rdzv_backend=zookeeper", "t.py"});
  EXPECT_NE(other.find("expected static, c10d or etcd-v3"), std::string::npos) << other;
}

TEST(EtcdConfig, BackendParserIsTheOneResolveUses) {
  EXPECT_EQ(*parse_rdzv_backend("static"), RdzvBackend::static_);
  EXPECT_EQ(*parse_rdzv_backend("c10d"), RdzvBackend::c10d);
  EXPECT_EQ(*parse_rdzv_backend("etcd-v3"), RdzvBackend::etcd_v3);
  auto v2 = parse_rdzv_backend("etcd-v2");
  ASSERT_FALSE(v2);
  EXPECT_EQ(v2.error().code, ErrorCode::usage);
  EXPECT_EQ(v2.error().message.rfind("'etcd-v2': expected static, c10d or etcd-v3 (", 0), 0U)
      << v2.error().message;
  EXPECT_EQ(parse_rdzv_backend("C10D").error().message, "'C10D': expected static, c10d or etcd-v3");
}

TEST(EtcdConfig, MemberParserQuotesTheTextAndSaysWhatWasExpected) {
  auto members = parse_etcd_members("a,http://b:1", true);
  ASSERT_TRUE(members) << members.error().message;
  EXPECT_EQ(*members, (std::vector<etcd::Endpoint>{{"a", 2379, true}, {"b", 1, false}}));
  EXPECT_EQ(
      parse_etcd_members(" ", false).error().message.rfind("' ': expected the etcd members", 0),
      0U);
  EXPECT_EQ(
      parse_etcd_members("a,,b", false).error().message.rfind("'a,,b': expected etcd members", 0),
      0U);
}

TEST(EtcdConfig, KeysOfOtherBackendsAreWarnedAbout) {
  auto cfg = resolve_args(etcd_args({"--rdzv_endpoint=a",
                                     "--rdzv_conf=is_host=1,timeout=5,store_type=tcp,"
                                     "password=hunter2,join_timeout=7,token_file=/t"}));
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->rdzv.rdzv_conf,
            (std::map<std::string, std::string>{{"join_timeout", "7"}, {"token_file", "/t"}}));
  ASSERT_EQ(cfg->warnings.size(), 4u);
  std::string all;
  for (const auto& w : cfg->warnings) {
    all += w + "\n";
  }
  EXPECT_NE(all.find("'is_host=1': ignored, not used by the etcd-v3 backend"), std::string::npos)
      << all;
  EXPECT_NE(all.find("use password_file=PATH"), std::string::npos) << all;
  EXPECT_EQ(cfg->rdzv.rdzv_settings.join_timeout, std::chrono::seconds(7));
}

TEST(EtcdConfig, EtcdKeysAreWarnedAboutUnderC10d) {
  auto conf = read_rdzv_conf("cacert=ca,key_prefix=/x,join_timeout=3", "c10d");
  ASSERT_TRUE(conf);
  EXPECT_EQ(conf->pairs, (std::map<std::string, std::string>{{"join_timeout", "3"}}));
  ASSERT_EQ(conf->warnings.size(), 2u);
  EXPECT_NE(conf->warnings[0].find("only etcd-v3 reads it"), std::string::npos)
      << conf->warnings[0];
}

TEST(EtcdConfig, EveryConfKeyIsReadBySomeBackendOrSaysWhyNot) {
  for (const auto& k : rdzv_conf_keys()) {
    EXPECT_TRUE(k.read_by != 0 || !k.why_ignored.empty()) << k.key;
    EXPECT_TRUE(k.read_by == k_read_by_all || !k.why_ignored.empty()) << k.key;
  }
}

}  // namespace

namespace ddprun::config {
namespace {

// torchrun's static handler reads `timeout` and passes over join_timeout without a word.
TEST(RdzvConfKeys, JoinTimeoutUnderStaticIsIgnoredWithAWarningNamingTimeout) {
  auto conf = read_rdzv_conf("join_timeout=6,timeout=8", "static");
  ASSERT_TRUE(conf);
  EXPECT_EQ(conf->pairs, (std::map<std::string, std::string>{{"timeout", "8"}}));
  ASSERT_EQ(conf->warnings.size(), 1u);
  EXPECT_NE(conf->warnings[0].find("'join_timeout=6': ignored, not used by the static backend: it "
                                   "waits for the nodes up to --rdzv_conf timeout"),
            std::string::npos)
      << conf->warnings[0];
}

}  // namespace
}  // namespace ddprun::config
