#pragma once
// Ports for tests: one that is free to listen on, one that refuses every connection.

namespace ddprun::test {

/// A TCP port that was free on every address a moment ago, from below the kernel's ephemeral
/// range (so no test's outgoing connection or port-0 listener can be given it meanwhile).
int free_port();

/// A port on 127.0.0.1 that refuses every connection for as long as this object lives: a
/// socket bound to it that never listens. Holding the port keeps another test (or this one's
/// own listeners) from taking it, which a port freed by closing a listener does not.
class RefusingPort {
 public:
  RefusingPort();
  ~RefusingPort();
  RefusingPort(const RefusingPort&) = delete;
  RefusingPort& operator=(const RefusingPort&) = delete;
  /// The port, or 0 when no socket could be bound.
  [[nodiscard]] int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace ddprun::test
