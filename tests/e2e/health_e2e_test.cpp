// TORCHELASTIC_HEALTH_CHECK_PORT through the ddprun binary: while the workers run, GET /health
// answers 200 with the agent's state; a malformed request gets 400 and the job still succeeds;
// a port in use is one WARNING and the job runs on. Every wait is bounded.

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "support/raw_tcp.hpp"
#include "support/subprocess.hpp"

using namespace ddprun::test;

namespace {

std::string send_raw(int port, const std::string& raw) {
  return ddprun::test::exchange_on_loopback(port, raw);
}

const std::string k_get = "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n";

}  // namespace

TEST(HealthE2E, AnswersWhileWorkersRunAndSurvivesBadRequests) {
  const int port = free_port();
  auto child = start(
      {ddprun_bin(), "--standalone", "--nproc-per-node", "2", "--no-python", "/bin/sleep", "6"},
      RunOptions{{{"TORCHELASTIC_HEALTH_CHECK_PORT", std::to_string(port)}, {"LOGLEVEL", "INFO"}},
                 {},
                 "",
                 std::chrono::seconds(60)});
  std::string ok;
  ASSERT_TRUE(eventually(
      [&] {
        ok = send_raw(port, k_get);
        return ok.find(R"("workers_running":2)") != std::string::npos;
      },
      std::chrono::seconds(20)))
      << ok;
  EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << ok;
  EXPECT_NE(ok.find(R"("state":"running")"), std::string::npos) << ok;
  EXPECT_NE(ok.find(R"("timeout_seconds":60.0)"), std::string::npos) << ok;
  auto bad = send_raw(port, "\x01\x02 nonsense\r\n\r\n");
  EXPECT_EQ(bad.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << bad;
  EXPECT_EQ(send_raw(port, k_get).rfind("HTTP/1.1 200 OK", 0), 0u);
  EXPECT_EQ(wait_for(child.pid, std::chrono::seconds(60)), 0) << read_file(child.err_path);
  EXPECT_NE(read_file(child.err_path).find("health check server on port " + std::to_string(port)),
            std::string::npos)
      << read_file(child.err_path);
}

TEST(HealthE2E, APortInUseIsAWarningNotAFailedJob) {
  int holder = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_addr.s_addr = htonl(INADDR_ANY);
  ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&at), sizeof at), 0);
  ASSERT_EQ(::listen(holder, 1), 0);
  socklen_t len = sizeof at;
  ASSERT_EQ(::getsockname(holder, reinterpret_cast<sockaddr*>(&at), &len), 0);
  const auto port = std::to_string(ntohs(at.sin_port));
  auto r =
      run({ddprun_bin(), "--standalone", "--no-python", "/bin/true"},
          RunOptions{{{"TORCHELASTIC_HEALTH_CHECK_PORT", port}}, {}, "", std::chrono::seconds(60)});
  ::close(holder);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("TORCHELASTIC_HEALTH_CHECK_PORT=" + port + ": cannot listen on"),
            std::string::npos)
      << r.err;
  auto junk = run(
      {ddprun_bin(), "--standalone", "--no-python", "/bin/true"},
      RunOptions{{{"TORCHELASTIC_HEALTH_CHECK_PORT", "http"}}, {}, "", std::chrono::seconds(60)});
  EXPECT_EQ(junk.status, 0) << junk.err;
  EXPECT_NE(junk.err.find("TORCHELASTIC_HEALTH_CHECK_PORT 'http': expected a port number 0-65535; "
                          "ignored"),
            std::string::npos)
      << junk.err;
}
