// Failover in a 3-member cluster, TLS with client certificates, user/password auth, and a
// cluster that is not there.

#include "ddprun/etcd/codec.hpp"

#include <fstream>

#include "etcd_fixture.hpp"
#include "support/subprocess.hpp"

namespace ddprun::etcd::test {
namespace {

using namespace std::chrono_literals;
using ::ddprun::test::EtcdCluster;
using ::ddprun::test::EtcdClusterOptions;

TEST(EtcdFailover, CallsAndWatchMoveOnWhenTheMemberInUseIsKilled) {
  DDPRUN_SKIP_WITHOUT_ETCD();
  EtcdCluster cluster(EtcdClusterOptions{3, false});
  ASSERT_EQ(cluster.start(), "");
  asio::io_context io(1);
  auto client = make_client(io, cluster.endpoints());
  ASSERT_TRUE(client);
  ASSERT_TRUE(run_co(io, client->put({"/f/before", "1", 0})));
  auto w = run_co(io, client->watch({"/f/", prefix_end("/f/"), 0, false}));
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(client->current_endpoint().port, cluster.client_port(0));
  auto lease = run_co(io, client->lease_grant(1s, new_lease_id()));
  ASSERT_TRUE(lease) << lease.error().message;
  ASSERT_TRUE(run_co(io, client->put({"/g/alive", "1", lease->id})));
  std::optional<Error> lost;
  LeaseKeeper keeper(*client, *lease, [&](const Error& e) { lost = e; });
  keeper.start();

  cluster.kill_member(0);
  const auto t0 = std::chrono::steady_clock::now();
  auto put = run_co(io, client->put({"/f/after", "2", 0}));
  ASSERT_TRUE(put) << put.error().message;
  EXPECT_NE(client->current_endpoint().port, cluster.client_port(0));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  auto got = run_co(io, client->get("/f/before"));
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->has_value());

  // The watch resumed on another member and still delivers the put made after the kill.
  auto m = run_co(io, (*w)->next());
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_EQ(m->events.size(), 1U);
  EXPECT_EQ(m->events[0].kv.key, "/f/after");
  EXPECT_EQ(m->events[0].kv.mod_revision, *put);

  // The keeper renewed through the surviving members: two TTLs later the key is still there.
  asio::steady_timer pause(io, 2s);
  run_co(io, pause.async_wait(asio::use_awaitable));
  EXPECT_FALSE(lost.has_value()) << lost->message;
  auto alive = run_co(io, client->get("/g/alive"));
  ASSERT_TRUE(alive) << alive.error().message;
  EXPECT_TRUE(alive->has_value());
  run_co(io, keeper.stop());
}

TEST(EtcdUnreachable, OneErrorNamingEveryEndpointWithinTheTimeouts) {
  const int a = ::ddprun::test::free_port();
  const int b = ::ddprun::test::free_port();
  asio::io_context io(1);
  ClientOptions o;
  o.call_timeout = 500ms;
  auto client =
      make_client(io, "127.0.0.1:" + std::to_string(a) + ",127.0.0.1:" + std::to_string(b), o);
  ASSERT_TRUE(client);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_co(io, client->get("/x"));
  ASSERT_FALSE(r);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_EQ(r.error().code, ErrorCode::io);
  const std::string& m = r.error().message;
  EXPECT_NE(m.find("etcd /v3/kv/range: no member answered: http://127.0.0.1:" + std::to_string(a) +
                   " connect: "),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("http://127.0.0.1:" + std::to_string(b) + " connect"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos);
}

TEST(EtcdUnreachable, AMemberThatNeverAnswersCostsOneCallTimeout) {
  asio::io_context io(1);
  // Accepts connections (the kernel's backlog) and never answers.
  asio::ip::tcp::acceptor silent(io, {asio::ip::make_address("127.0.0.1"), 0});
  ClientOptions o;
  o.call_timeout = 300ms;
  auto client = make_client(io, "127.0.0.1:" + std::to_string(silent.local_endpoint().port()), o);
  ASSERT_TRUE(client);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_co(io, client->put({"/x", "y", 0}));
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::timeout) << r.error().message;
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 30s) << "a hang: no timing is asserted beyond that";
}

TEST(EtcdTls, ClientCertificateWorksAndAWrongCaIsAClearError) {
  DDPRUN_SKIP_WITHOUT_ETCD();
  EtcdCluster cluster(EtcdClusterOptions{1, true});
  ASSERT_EQ(cluster.start(), "");
  asio::io_context io(1);

  ClientOptions good;
  good.tls = {cluster.ca_file(), cluster.client_cert(), cluster.client_key()};
  auto client = make_client(io, cluster.endpoints(), good);
  ASSERT_TRUE(client);
  ASSERT_TRUE(run_co(io, client->put({"/tls/k", "v", 0})));
  auto got = run_co(io, client->get("/tls/k"));
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->value().value, "v");
  auto w = run_co(io, client->watch({"/tls/k", {}, 0, false}));
  ASSERT_TRUE(w) << w.error().message;

  ClientOptions wrong_ca = good;
  wrong_ca.tls.ca_file = cluster.other_ca_file();
  auto wrong = make_client(io, cluster.endpoints(), wrong_ca);
  auto r = run_co(io, wrong->get("/tls/k"));
  ASSERT_FALSE(r);
  EXPECT_NE(
      r.error().message.find(cluster.endpoint(0) + " TLS handshake: certificate verify failed"),
      std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("(CA file \"" + cluster.other_ca_file() + "\")"),
            std::string::npos)
      << r.error().message;

  ClientOptions no_cert;
  no_cert.tls.ca_file = cluster.ca_file();
  auto anonymous = make_client(io, cluster.endpoints(), no_cert);
  auto refused = run_co(io, anonymous->get("/tls/k"));
  EXPECT_FALSE(refused) << "a cluster with --client-cert-auth took a client without one";

  ClientOptions missing;
  missing.endpoints = *parse_endpoints(cluster.endpoints());
  missing.tls.ca_file = cluster.ca_file() + ".missing";
  auto bad = Client::make(io, missing);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::config);
  EXPECT_NE(bad.error().message.find("etcd TLS: cannot load the CA file \"" + missing.tls.ca_file),
            std::string::npos)
      << bad.error().message;
}

TEST(EtcdAuth, UserAndPasswordGiveATokenAndAWrongPasswordIsAConfigError) {
  DDPRUN_SKIP_WITHOUT_ETCD();
  EtcdCluster cluster;
  ASSERT_EQ(cluster.start(), "");
  ASSERT_EQ(cluster.enable_auth("agent", "s3cret"), "");
  asio::io_context io(1);

  ClientOptions o;
  o.username = "agent";
  o.password = "s3cret";
  auto client = make_client(io, cluster.endpoints(), o);
  ASSERT_TRUE(client);
  auto put = run_co(io, client->put({"/auth/k", "v", 0}));
  ASSERT_TRUE(put) << put.error().message;
  auto w = run_co(io, client->watch({"/auth/k", {}, 0, false}));
  ASSERT_TRUE(w) << w.error().message;
  ASSERT_TRUE(run_co(io, client->erase({"/auth/k", {}})));
  auto m = run_co(io, (*w)->next());
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->events.at(0).type, WatchEvent::Type::del);

  auto anonymous = make_client(io, cluster.endpoints());
  auto refused = run_co(io, anonymous->get("/auth/k"));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::protocol);

  o.password = "wrong";
  auto wrong = make_client(io, cluster.endpoints(), o);
  auto r = run_co(io, wrong->get("/auth/k"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::config);
  EXPECT_NE(r.error().message.find("etcd: user \"agent\" cannot log in at " + cluster.endpoint(0) +
                                   ": etcdserver: authentication failed"),
            std::string::npos)
      << r.error().message;
}

}  // namespace
}  // namespace ddprun::etcd::test
