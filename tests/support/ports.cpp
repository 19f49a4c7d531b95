#include "support/ports.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <utility>

namespace ddprun::test {

namespace {

/// [low, high): the ports free_port() picks from: from 10000 up to the start of the kernel's
/// ephemeral range (/proc/sys/net/ipv4/ip_local_port_range).
std::pair<int, int> pickable_ports() {
  int ephemeral_low = 32768;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> ephemeral_low;
  const int low = 10000;
  return {low, std::max(ephemeral_low, low + 1000)};
}

bool bindable(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  const bool ok = fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  if (fd >= 0) {
    close(fd);
  }
  return ok;
}

}  // namespace

// Ports come from below the kernel's ephemeral range, so that no other test's outgoing
// connection (an agent's, a worker's) can be given the port between this pick and the bind
// that uses it; each test process walks the range from its own pid-derived start, so
// concurrent tests take different ports. A port is offered only when 0.0.0.0:port binds now
// (nobody holds it on any address) and this process has not offered it before.
int free_port() {
  static std::atomic<unsigned> next{static_cast<unsigned>(getpid()) * 613U};
  const auto [low, high] = pickable_ports();
  const auto span = static_cast<unsigned>(high - low);
  for (unsigned tries = 0; tries < span; ++tries) {
    const int port = low + static_cast<int>(next++ % span);
    const bool a_default = port == 29400 || port == 29500;  // torchrun's, used under `env -i`
    if (!a_default && bindable(port)) {
      return port;
    }
  }
  return 0;
}

RefusingPort::RefusingPort() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof at;
  if (fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0 &&
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&at), &len) == 0) {
    port_ = ntohs(at.sin_port);
  }
}

RefusingPort::~RefusingPort() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

}  // namespace ddprun::test
