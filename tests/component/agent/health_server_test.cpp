// HealthServer on 127.0.0.1 over a real socket: the io_context runs on a second thread (the
// agent runs it on its only one), the test is the client with plain blocking sockets, each read
// bounded by SO_RCVTIMEO. No assertion is about how long anything took.

#include "ddprun/agent/health_server.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>

#include "support/raw_tcp.hpp"

namespace ddprun::agent {
namespace {

using namespace std::chrono_literals;

std::string send_raw(int port, const std::string& raw) {
  return ddprun::test::exchange_on_loopback(port, raw);
}

std::string get(int port, const std::string& target) {
  return send_raw(port, "GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n");
}

class HealthServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = HealthServer::start(ctx_, "127.0.0.1", 0, 2s, [this] {
      return HealthSnapshot{"running", 1, 2, since_.load()};
    });
    ASSERT_TRUE(server) << server.error().message;
    server_ = std::move(*server);
    thread_ = std::thread([this] { ctx_.run(); });
  }
  void TearDown() override {
    work_.reset();
    ctx_.stop();
    thread_.join();
  }

  asio::io_context ctx_{1};
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(ctx_);
  std::atomic<double> since_{0.5};
  std::unique_ptr<HealthServer> server_;
  std::thread thread_;
};

TEST_F(HealthServerTest, AnswersJsonWith200ThenWith503AfterTheTimeout) {
  auto ok = get(server_->port(), "/health");
  EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << ok;
  EXPECT_NE(ok.find("Content-Type: application/json"), std::string::npos) << ok;
  EXPECT_NE(ok.find(R"("state":"running")"), std::string::npos) << ok;
  EXPECT_NE(ok.find(R"("workers_running":2)"), std::string::npos) << ok;
  since_ = 2.5;
  auto stale = get(server_->port(), "/");
  EXPECT_EQ(stale.rfind("HTTP/1.1 503 Service Unavailable\r\n", 0), 0u) << stale;
  EXPECT_NE(stale.find(R"("healthy":false)"), std::string::npos) << stale;
}

TEST_F(HealthServerTest, BadRequestsGet400AndTheServerGoesOn) {
  auto bad = send_raw(server_->port(), "NOT HTTP AT ALL\r\n\r\n");
  EXPECT_EQ(bad.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << bad;
  auto huge = send_raw(server_->port(),
                       "GET /health HTTP/1.1\r\nX: " + std::string(20000, 'a') + "\r\n\r\n");
  EXPECT_EQ(huge.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << huge.substr(0, 200);
  EXPECT_EQ(send_raw(server_->port(), ""), "");  // connect and close: no answer
  EXPECT_EQ(get(server_->port(), "/nope").rfind("HTTP/1.1 404", 0), 0u);
  auto post = send_raw(server_->port(), "POST /health HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(post.rfind("HTTP/1.1 405", 0), 0u) << post;
  EXPECT_EQ(get(server_->port(), "/health").rfind("HTTP/1.1 200 OK", 0), 0u);
}

TEST_F(HealthServerTest, APortInUseIsAnErrorNamingIt) {
  auto second =
      HealthServer::start(ctx_, "127.0.0.1", server_->port(), 2s, [] { return HealthSnapshot{}; });
  ASSERT_FALSE(second);
  EXPECT_NE(
      second.error().message.find("cannot listen on 127.0.0.1:" + std::to_string(server_->port())),
      std::string::npos)
      << second.error().message;
}

}  // namespace
}  // namespace ddprun::agent
