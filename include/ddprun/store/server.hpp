#pragma once
// The TCPStore-compatible server: one acceptor and one callback-driven Session per connection on
// the caller's io_context (single-threaded). Speaks every dialect, detected per connection.

#include "ddprun/net/asio.hpp"
#include "ddprun/store/limits.hpp"
#include "ddprun/store/protocol.hpp"
#include "ddprun/util/result.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace ddprun::store {

class KvState;

struct ServerOptions {
  std::uint64_t max_key_bytes = k_max_key_bytes;
  std::uint64_t max_value_bytes = k_max_value_bytes;
  std::uint64_t max_keys_per_request = k_max_keys_per_request;
  std::uint64_t max_request_bytes = k_max_request_bytes;
  std::size_t max_connections = k_max_connections;
  std::size_t max_parked_waits_per_connection = k_max_parked_waits_per_connection;
  std::size_t max_parked_waits = k_max_parked_waits;
  std::size_t max_memory_bytes = k_max_memory_bytes;
  /// 0 disables the stalled-request (slowloris) timeout.
  std::chrono::milliseconds frame_timeout = k_frame_timeout;
  /// Forces D0 or D1 for connections without the VALIDATE hello; legacy_auto detects.
  Dialect legacy_dialect = Dialect::legacy_auto;
  std::chrono::milliseconds opcode8_grace = k_opcode8_grace;
  /// Tests: behave like one of PyTorch's own servers (spec §2.9, §6.1) instead of serving every
  /// dialect. legacy_only with legacy_dialect d0 = torch <= 2.0, d1 = torch 2.1.
  HelloPolicy hello_policy = HelloPolicy::any;
  /// With validate_only: a connection that opens otherwise gets no answer, ever (the libuv
  /// backend), instead of being closed (the classic backend).
  bool ignore_unvalidated = false;
  /// false: PING is an unknown opcode and closes the connection (VALIDATE-era servers before
  /// the mid-2024 connect rework, ~2.5).
  bool answer_ping = true;
  /// false: LIST_KEYS is an unknown opcode and closes the connection (every PyTorch server
  /// before ~2.10, torch 2.6's included).
  bool answer_list_keys = true;
  /// Non-empty: keys under "ddprun/" need the rendezvous handshake (store/auth.hpp).
  std::string token;
};

/// The server's own counters: what it holds now and whom it dropped (for tests and logs).
struct ServerStats {
  std::size_t connections = 0;
  std::size_t stored_bytes = 0;  ///< keys + values + queue items
  std::size_t input_bytes = 0;   ///< buffered, not yet complete requests
  std::size_t output_bytes = 0;  ///< unsent replies and deliveries
  std::size_t parked_waits = 0;
  std::uint64_t requests = 0;             ///< requests applied since the start
  std::uint64_t refused_connections = 0;  ///< over the connection cap
  std::uint64_t dropped_stalled = 0;      ///< partial request past frame_timeout
  std::uint64_t dropped_memory = 0;       ///< refused by the global memory cap
  std::uint64_t dropped_malformed = 0;    ///< malformed request or over a protocol limit
  std::size_t memory_in_use() const { return stored_bytes + input_bytes + output_bytes; }
};

/// Owns the listening socket, the KvState and every session. All methods run on the
/// io_context's thread. Destroying the Server stops it.
class Server {
 public:
  Server(asio::io_context& io, const ServerOptions& options = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Binds and listens synchronously, then accepts in a co_spawned coroutine. host "" or "::"
  /// = dual-stack any-address, "0.0.0.0" = IPv4 any, otherwise the resolved address.
  /// Port 0 picks a free port (see port()). Error: "bind <host>:<port>: <reason>".
  Result<void> listen(const std::string& host, std::uint16_t port);
  std::uint16_t port() const;
  /// Closes the acceptor and every connection; run() then drains.
  void stop();
  std::size_t connection_count() const;
  /// Connection cap in force (max_connections, lowered by the open-file limit).
  std::size_t connection_limit() const;
  const KvState& state() const;
  ServerStats stats() const;
  /// Stores a key as a client's SET would (waiters wake, watchers hear of it).
  void set_local(const std::string& key, std::string value);
  /// KvState::erase_prefix on the served state.
  std::size_t erase_prefix(std::string_view prefix);

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace ddprun::store
