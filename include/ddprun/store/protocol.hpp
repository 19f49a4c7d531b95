#pragma once
// The c10d TCPStore wire protocol (spec: tcpstore-protocol.md): opcode tables for the three
// dialects, an incremental pure request decoder with per-connection dialect detection (§6.2),
// and encoders for requests and replies. No sockets in here.

#include "ddprun/store/limits.hpp"
#include "ddprun/util/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ddprun::store {

/// legacy_auto: a connection without the VALIDATE hello whose D0/D1 choice is still open.
/// d0 = PyTorch <= 2.0 (incl. 1.13), d1 = 2.1, d2 = VALIDATE era (2.2/2.3 .. main).
enum class Dialect : std::uint8_t { legacy_auto, d0, d1, d2 };

/// Which first messages a connection may open with. any = ours: every dialect, detected (§6.2);
/// legacy_only = a PyTorch <= 2.1 server: no VALIDATE (its hello parses as a legacy SET with an
/// absurd key length); validate_only = a VALIDATE-era PyTorch server: VALIDATE must come first.
enum class HelloPolicy : std::uint8_t { any, legacy_only, validate_only };

/// Canonical operations, independent of any dialect's numbering.
enum class Op : std::uint8_t {
  validate,
  set,
  compare_set,
  get,
  add,
  check,
  wait,
  get_num_keys,
  watch_key,
  delete_key,
  append,
  multi_get,
  multi_set,
  cancel_wait,
  ping,
  queue_push,
  queue_pop,
  queue_len,
  list_keys,
  barrier
};

inline constexpr std::uint32_t k_validation_magic = 0x3C85F7CE;

namespace reply {
inline constexpr std::uint8_t k_ready = 0x00;
inline constexpr std::uint8_t k_not_ready = 0x01;
inline constexpr std::uint8_t k_stop_waiting = 0x00;
inline constexpr std::uint8_t k_wait_canceled = 0x01;
inline constexpr std::uint8_t k_key_updated = 0;
inline constexpr std::uint8_t k_key_created = 1;
inline constexpr std::uint8_t k_key_deleted = 2;
inline constexpr std::uint8_t k_callback_registered = 3;
}  // namespace reply

/// One decoded request. Fields unused by an op stay empty / zero.
struct Request {
  Request() = default;
  Request(Op op_, std::string key_ = {},
          std::string value_ = {},  // NOLINT(google-explicit-constructor)
          std::string desired_ = {})
      : op(op_), key(std::move(key_)), value(std::move(value_)), desired(std::move(desired_)) {}

  Op op = Op::get;
  std::string key;                ///< key, queue name or barrier key
  std::string value;              ///< SET/APPEND/QUEUE_PUSH value; COMPARE_SET expected value
  std::string desired;            ///< COMPARE_SET desired value
  std::int64_t number = 0;        ///< ADD delta, BARRIER world size
  std::uint32_t word = 0;         ///< VALIDATE magic, PING nonce
  std::vector<std::string> keys;  ///< CHECK/WAIT/MULTI_GET
  std::vector<std::pair<std::string, std::string>> pairs;  ///< MULTI_SET
  bool operator==(const Request&) const = default;
};

struct DecodeLimits {
  std::uint64_t max_key_bytes = k_max_key_bytes;
  std::uint64_t max_value_bytes = k_max_value_bytes;
  std::uint64_t max_keys_per_request = k_max_keys_per_request;
  std::uint64_t max_request_bytes = k_max_request_bytes;
};

/// Opcode byte -> Op in a fixed dialect (legacy_auto resolves nothing: returns nullopt).
std::optional<Op> op_from_byte(Dialect dialect, std::uint8_t byte);
/// Op -> opcode byte in a fixed dialect; nullopt when the dialect lacks the op.
std::optional<std::uint8_t> byte_from_op(Dialect dialect, Op op);
std::string_view to_string(Op op);
std::string_view to_string(Dialect dialect);

enum class DecodeStatus {
  need_more,    ///< feed more bytes
  request,      ///< DecodeResult::request holds the next request
  ambiguous,    ///< legacy opcode 8 + key with nothing after it: feed more, or resolve_silence()
  unvalidated,  ///< HelloPolicy::validate_only and the first message is not VALIDATE (stays so)
  error         ///< malformed or over a limit; the connection must be closed
};

struct DecodeResult {
  DecodeStatus status = DecodeStatus::need_more;
  Request request;
  std::string error;  ///< one line, set when status == error
};

/// Incremental request decoder for one connection, like Asio's http request_parser: feed()
/// bytes as they arrive, then call next() until it stops returning `request`. Limits are
/// checked on length prefixes before anything is allocated. After `error` the decoder stays
/// failed.
class Decoder {
 public:
  explicit Decoder(DecodeLimits limits = {}, Dialect forced_legacy = Dialect::legacy_auto,
                   HelloPolicy hello = HelloPolicy::any);
  void feed(std::string_view bytes);
  DecodeResult next();
  /// The peer stayed silent after an ambiguous opcode 8: it is a D0 DELETE_KEY.
  void resolve_silence();
  Dialect dialect() const { return dialect_; }
  std::size_t buffered() const { return buf_.size() - start_; }
  /// Requests returned so far (a change means progress).
  std::uint64_t decoded() const { return decoded_; }

 private:
  DecodeResult fail(std::string message);
  void consumed(std::size_t n);
  bool detect_hello();
  std::optional<Op> resolve_op(std::uint8_t byte, std::string& error);

  DecodeLimits limits_;
  Dialect dialect_;
  HelloPolicy hello_;
  bool hello_checked_ = false;
  bool silence_ = false;
  bool failed_ = false;
  std::uint64_t decoded_ = 0;
  std::string buf_;
  std::size_t start_ = 0;
  std::size_t need_total_ = 0;  ///< don't re-parse before buffered() reaches this
};

// --- Encoders (little-endian, explicit) ---

void put_u8(std::string& out, std::uint8_t v);
/// A one-byte reply (READY, STOP_WAITING, ...).
std::string one_byte(std::uint8_t v);
void put_u32(std::string& out, std::uint32_t v);
void put_u64(std::string& out, std::uint64_t v);
void put_i64(std::string& out, std::int64_t v);
void put_bytes(std::string& out, std::string_view bytes);
void put_list(std::string& out, const std::vector<std::string>& items);
std::uint64_t get_u64(std::string_view eight_bytes);
std::uint32_t get_u32(std::string_view four_bytes);

/// `00 CE F7 85 3C`: the first message of every D2 connection.
std::string encode_validate();
/// A request in the given dialect (d0, d1 or d2); an error if the dialect lacks the op.
Result<std::string> encode_request(Dialect dialect, const Request& request);
/// D0 watch notification: u8 kind, S key, S old, S new.
std::string encode_watch_event(std::uint8_t kind, std::string_view key, std::string_view old_value,
                               std::string_view new_value);

/// A key for log lines: at most k_log_key_chars bytes, non-printables escaped.
std::string loggable_key(std::string_view key);

}  // namespace ddprun::store
