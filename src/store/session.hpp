#pragma once
// Module-private: one store connection (Session) and the registry of live sessions that routes
// deliveries (STOP_WAITING, watch events) between them and accounts for their memory.

#include "ddprun/net/asio.hpp"
#include "ddprun/store/auth.hpp"
#include "ddprun/store/kv_state.hpp"
#include "ddprun/store/protocol.hpp"
#include "ddprun/store/server.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ddprun::store {

class Session;
using SessionClock = std::chrono::steady_clock;

/// State shared by all sessions of one server; lives as long as the server (or longer).
struct Registry {
  explicit Registry(const ServerOptions& opts);
  /// Appends to the target's output; it is sent by flush_dirty() at the end of the event.
  void deliver(const Delivery& delivery);
  void remove(ConnId id);
  /// One write per session that received deliveries during the current event.
  void flush_dirty();
  std::size_t memory_in_use() const { return kv.bytes() + input_bytes + output_bytes; }

  ServerOptions options;
  KvState kv;
  std::unordered_map<ConnId, std::shared_ptr<Session>> sessions;
  std::vector<std::shared_ptr<Session>> dirty;
  std::vector<char> read_chunk;  ///< shared read buffer: one thread, idle sessions cost nothing
  std::size_t input_bytes = 0;
  std::size_t output_bytes = 0;
  ServerStats counters;  ///< only the requests, refused_ and dropped_ fields are kept here
  ConnId next_id = 1;
};

/// Reads every complete request from one readiness event, applies them to the KvState in
/// order, appends the replies to one output buffer and sends it with one write. Reading
/// pauses while the unsent output is above the high-water mark. Malformed input, a stalled
/// partial request or the memory cap close this connection only, with one log line naming the
/// peer and the reason (keys truncated, values never).
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(asio::ip::tcp::socket socket, ConnId id, Registry& registry);
  void start();
  /// Queues bytes for this connection (a delivery); the caller arranges the flush.
  void enqueue(std::string_view bytes);
  /// Sends what is queued: one write, then waits for writability if the kernel took less.
  void flush();
  /// Idempotent. A non-empty reason is logged as a warning.
  void close(std::string_view reason);
  /// True when part of a request has been buffered, without a request completing, for
  /// longer than `timeout` (never while reading is paused by our own backpressure).
  bool stalled(SessionClock::time_point now, std::chrono::milliseconds timeout) const;
  std::size_t buffered_input() const { return decoder_.buffered(); }
  bool queued_for_flush = false;  ///< in Registry::dirty

 private:
  void arm_read();
  void arm_write();
  void on_readable(const boost::system::error_code& ec);
  void on_writable(const boost::system::error_code& ec);
  bool read_input();
  void process();
  void finish_event(bool progress);
  void apply(const Request& request);
  bool refuse_for_memory(const Request& request);
  void append(std::string_view bytes);
  void sent(std::size_t n);
  void account_input();
  void arm_grace();
  std::size_t pending_output() const { return out_.size() - out_sent_; }
  /// With a token: answers the handshake and refuses protected keys before authentication.
  /// True when the request was handled here.
  bool guard(const Request& request);

  asio::ip::tcp::socket socket_;
  ConnId id_;
  Registry& registry_;
  Decoder decoder_;
  std::string out_;
  std::size_t out_sent_ = 0;
  std::size_t accounted_input_ = 0;
  std::unique_ptr<asio::steady_timer> grace_timer_;  ///< only for the legacy opcode 8
  std::uint64_t grace_gen_ = 0;
  SessionClock::time_point partial_since_{};
  bool reading_ = false;  ///< a read wait is pending
  bool writing_ = false;  ///< a write wait is pending
  bool paused_ = false;   ///< output above the high-water mark: not reading
  bool closed_ = false;
  bool muted_ = false;  ///< ignore_unvalidated: input is read and dropped, nothing is answered
  ServerAuthState auth_;
};

}  // namespace ddprun::store
