#pragma once
// One raw request to a TCP server on 127.0.0.1, for tests of the agent's small servers (the
// health check port): no client library between the test and the bytes.

#include <chrono>
#include <string>

namespace ddprun::test {

/// Connects to 127.0.0.1:port, sends `raw` and returns everything the server wrote before it
/// closed the connection ("" when nobody accepted). Each read waits at most `read_bound`.
std::string exchange_on_loopback(int port, const std::string& raw,
                                 std::chrono::seconds read_bound = std::chrono::seconds(5));

}  // namespace ddprun::test
