#pragma once
// Shared helpers for store component tests: a Server on a background io_context thread
// (tests only; production runs one thread) and a raw loopback socket with bounded reads.

#include "ddprun/store/command.hpp"
#include "ddprun/store/kv_state.hpp"
#include "ddprun/store/server.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace ddprun::test {

inline constexpr std::chrono::milliseconds k_io_timeout{5000};

/// The server kinds a client meets (spec §6.1, §2.9): ddprun's own, and ddprun's made to behave
/// like one of PyTorch's servers.
enum class Emulated {
  ours,
  torch_1x,           ///< no VALIDATE, D0: a VALIDATE hello is a SET with an absurd key
  torch_2_1,          ///< no VALIDATE, D1
  torch_2x_classic,   ///< VALIDATE first, or the connection is closed
  torch_2x_libuv,     ///< VALIDATE first, or the connection is ignored
  torch_2_2_classic,  ///< as torch_2x_classic, from before PING
  torch_2_2_libuv     ///< as torch_2x_libuv, from before PING
};

inline store::ServerOptions emulating(Emulated kind) {
  store::ServerOptions o;
  const bool legacy = kind == Emulated::torch_1x || kind == Emulated::torch_2_1;
  if (legacy) {
    o.hello_policy = store::HelloPolicy::legacy_only;
    o.legacy_dialect = kind == Emulated::torch_1x ? store::Dialect::d0 : store::Dialect::d1;
  } else if (kind != Emulated::ours) {
    o.hello_policy = store::HelloPolicy::validate_only;
    o.ignore_unvalidated = kind == Emulated::torch_2x_libuv || kind == Emulated::torch_2_2_libuv;
    o.answer_ping = kind == Emulated::torch_2x_classic || kind == Emulated::torch_2x_libuv;
  }
  return o;
}

/// Runs a store Server on its own thread; every access goes through on_io().
class ServerThread {
 public:
  explicit ServerThread(const store::ServerOptions& options = {})
      : work_(asio::make_work_guard(io_)), server_(io_, options) {}
  ~ServerThread() {
    on_io([this] {
      server_.stop();
      return 0;
    });
    work_.reset();
    thread_.join();
  }

  std::uint16_t start(const std::string& host = "127.0.0.1") {
    const auto r = server_.listen(host, 0);
    if (!r) {
      return 0;
    }
    thread_ = std::thread([this] { io_.run(); });
    return server_.port();
  }

  template <typename F>
  std::invoke_result_t<F> on_io(F f) {
    std::packaged_task<decltype(f())()> task(std::move(f));
    auto result = task.get_future();
    asio::post(io_, [&task] { task(); });
    return result.get();
  }

  std::size_t connections() {
    return on_io([this] { return server_.connection_count(); });
  }
  std::size_t parked_waits() {
    return on_io([this] { return server_.state().parked_waits(); });
  }

  /// Polls `pred` on the io thread until it holds or the deadline passes.
  template <typename P>
  bool eventually(P pred, std::chrono::milliseconds timeout = k_io_timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (on_io([&] { return pred(server_); })) {
        return true;
      }
      std::this_thread::yield();
    }
    return false;
  }

  store::Server& server() { return server_; }

 private:
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  store::Server server_;
  std::thread thread_;
};

/// `ddprun store ARGS`: its exit code, with its stdout and stderr captured.
inline int run(const std::vector<std::string>& args, std::string* out = nullptr,
               std::string* err = nullptr) {
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  const int rc = store::store_command(args, util::Env::from_environ(environ));  // setenv tokens
  const std::string o = testing::internal::GetCapturedStdout();
  const std::string e = testing::internal::GetCapturedStderr();
  if (out != nullptr) {
    *out = o;
  }
  if (err != nullptr) {
    *err = e;
  }
  return rc;
}

/// A blocking loopback TCP connection with bounded reads, for byte-exact exchanges.
class RawConn {
 public:
  explicit RawConn(std::uint16_t port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~RawConn() { close(fd_); }
  RawConn(const RawConn&) = delete;
  RawConn& operator=(const RawConn&) = delete;

  bool ok() const { return ok_; }
  bool send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  /// Exactly n bytes, or nullopt on EOF/error/timeout.
  std::optional<std::string> recv(std::size_t n, std::chrono::milliseconds timeout = k_io_timeout) {
    std::string out;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (out.size() < n) {
      if (!readable(deadline)) {
        return std::nullopt;
      }
      char chunk[4096];
      const auto want = std::min(sizeof chunk, n - out.size());
      const ssize_t got = ::recv(fd_, chunk, want, 0);
      if (got <= 0) {
        return std::nullopt;
      }
      out.append(chunk, static_cast<std::size_t>(got));
    }
    return out;
  }
  /// True when the server closed the connection (EOF or reset) within the timeout.
  bool closed_by_peer(std::chrono::milliseconds timeout = k_io_timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (!readable(deadline)) {
        return false;
      }
      char c;
      const ssize_t got = ::recv(fd_, &c, 1, 0);
      if (got <= 0) {
        return true;
      }
    }
  }
  /// True when nothing arrives within `window` (used only to assert absence).
  bool silent_for(std::chrono::milliseconds window) {
    return !readable(std::chrono::steady_clock::now() + window);
  }

 private:
  bool readable(std::chrono::steady_clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd_, POLLIN, 0};
    return left.count() > 0 && poll(&p, 1, static_cast<int>(left.count())) > 0;
  }
  int fd_;
  bool ok_ = false;
};

}  // namespace ddprun::test
