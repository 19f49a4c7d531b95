#pragma once
// Module-private: one store connection (Session) and the registry of live sessions that routes
// deliveries (STOP_WAITING, watch events) between them.

#include "ddprun/net/asio.hpp"
#include "ddprun/store/auth.hpp"
#include "ddprun/store/kv_state.hpp"
#include "ddprun/store/protocol.hpp"
#include "ddprun/store/server.hpp"

#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace ddprun::store {

class Session;

/// State shared by all sessions of one server; lives as long as the server (or longer).
struct Registry {
  explicit Registry(const ServerOptions& opts);
  void deliver(const Delivery& delivery);
  void remove(ConnId id);

  ServerOptions options;
  KvState kv;
  std::unordered_map<ConnId, std::shared_ptr<Session>> sessions;
  std::vector<char> read_chunk;  ///< shared read buffer: one thread, idle sessions cost nothing
  ConnId next_id = 1;
};

/// Reads requests, applies them to the KvState and writes replies, in order. Reading pauses
/// while the unsent output exceeds the high-water mark. Malformed input closes this
/// connection only, with one log line naming the peer and the reason.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(asio::ip::tcp::socket socket, ConnId id, Registry& registry);
  void start();
  void enqueue(std::string bytes);
  /// Idempotent. A non-empty reason is logged as a warning.
  void close(const std::string& reason);

 private:
  asio::awaitable<void> reader();
  asio::awaitable<void> writer();
  asio::awaitable<void> wait_for_drain();
  void on_bytes(std::size_t n);
  void process();
  void arm_grace();
  void apply(const Request& request);
  /// With a token: answers the handshake and refuses protected keys before authentication.
  /// True when the request was handled here.
  bool guard(const Request& request);

  asio::ip::tcp::socket socket_;
  ConnId id_;
  Registry& registry_;
  std::string peer_;
  Decoder decoder_;
  asio::steady_timer write_signal_;
  asio::steady_timer drain_signal_;
  asio::steady_timer grace_timer_;
  std::uint64_t grace_gen_ = 0;
  std::deque<std::string> outbox_;
  std::size_t outbox_bytes_ = 0;
  bool closed_ = false;
  ServerAuthState auth_;
};

}  // namespace ddprun::store
