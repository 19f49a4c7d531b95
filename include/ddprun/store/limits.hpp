#pragma once
// Named limits and timing constants of the store (server and client). Defaults match the
// libuv TCPStore backend (MAX_STRING_LEN, MAX_PAYLOAD_LEN, MAX_KEY_COUNT); all are
// configurable through ServerOptions / ClientOptions.

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace ddprun::store {

inline constexpr std::uint64_t k_max_key_bytes = 8 * 1024;
inline constexpr std::uint64_t k_max_value_bytes = 8 * 1024 * 1024;
inline constexpr std::uint64_t k_max_keys_per_request = 128 * 1024;
/// A partially received request may not buffer more than this (MULTI_SET of many values).
inline constexpr std::uint64_t k_max_request_bytes = 64 * 1024 * 1024;
inline constexpr std::size_t k_max_connections = 65536;
inline constexpr std::size_t k_max_parked_waits_per_connection = 1024;
/// Parked WAIT/BARRIER requests over all connections; the one beyond closes its connection.
inline constexpr std::size_t k_max_parked_waits = 256 * 1024;
/// Global cap on the server's data: stored keys and values (and queue items) plus every
/// connection's buffered partial request and unsent output. A SET that would pass it, or a
/// connection whose buffering would, is refused by closing that connection (the protocol has
/// no error reply).
inline constexpr std::size_t k_max_memory_bytes = std::size_t{2} * 1024 * 1024 * 1024;
/// A connection that holds part of a request for longer than this without completing one
/// (slowloris) is closed. Idle connections and parked waits are not affected. 0 = never.
inline constexpr std::chrono::milliseconds k_frame_timeout{30'000};
/// The stalled-request sweep runs every frame_timeout / 4, within these bounds.
inline constexpr std::chrono::milliseconds k_min_sweep_interval{10};
inline constexpr std::chrono::milliseconds k_max_sweep_interval{1'000};
/// Reading stops while a connection's unsent output exceeds this (backpressure) and resumes
/// once it is below the low-water mark.
inline constexpr std::size_t k_output_high_water_bytes = 4 * 1024 * 1024;
inline constexpr std::size_t k_output_low_water_bytes = 1024 * 1024;
/// A connection whose unsent output exceeds this (e.g. a stuck watcher) is closed.
inline constexpr std::size_t k_output_hard_limit_bytes = 64 * 1024 * 1024;
/// One read buffer shared by all connections of a server (single thread).
inline constexpr std::size_t k_read_chunk_bytes = 64 * 1024;
/// Reads per readiness event before the next connection gets its turn.
inline constexpr std::size_t k_reads_per_event = 4;
/// An emptied input or output buffer keeps at most this much capacity (idle connections stay
/// small after one large request or reply).
inline constexpr std::size_t k_idle_buffer_keep_bytes = 4 * 1024;
inline constexpr int k_listen_backlog = 16384;
/// Silence after a legacy opcode 8 + key that means D0 DELETE_KEY rather than D1 APPEND.
inline constexpr std::chrono::milliseconds k_opcode8_grace{30};
inline constexpr std::chrono::milliseconds k_accept_error_backoff{100};
/// Keys in log lines are truncated to this many bytes; values are never logged.
inline constexpr std::size_t k_log_key_chars = 64;

inline constexpr std::chrono::milliseconds k_default_connect_timeout{30'000};
inline constexpr std::chrono::milliseconds k_default_op_timeout{300'000};
/// Bound on each dialect probe (dialect_probe.hpp): a silent server costs at most this, once.
inline constexpr std::chrono::milliseconds k_dialect_probe_timeout{3'000};
inline constexpr std::chrono::milliseconds k_initial_backoff{10};
inline constexpr std::chrono::milliseconds k_max_backoff{1'000};
/// Largest reply the client accepts (PyTorch's own servers have no value limit).
inline constexpr std::uint64_t k_client_max_reply_bytes = 256 * 1024 * 1024;

}  // namespace ddprun::store
