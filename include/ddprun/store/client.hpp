#pragma once
// Store clients. Client is asynchronous on the caller's io_context (so the agent can run a
// Server and a Client on one thread); SyncClient owns an io_context for tools and tests.
// Keys are sent as given: PyTorch's TCPStore prefixes user keys with "/", so torch's key "k1"
// is "/k1" here.

#include "ddprun/net/asio.hpp"
#include "ddprun/store/dialect_probe.hpp"
#include "ddprun/store/limits.hpp"
#include "ddprun/store/protocol.hpp"
#include "ddprun/util/result.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ddprun::store {

/// Rendezvous authentication on every connect (store/auth.hpp): off = a plain TCPStore client
/// (what workers are); probe = no token, but fail with ErrorCode::config when the store needs
/// one; token = the mutual handshake with ClientOptions::token.
enum class AuthMode : std::uint8_t { off, probe, token };

struct ClientOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  /// Total time connect() keeps retrying (exponential backoff k_initial_backoff..k_max_backoff).
  std::chrono::milliseconds connect_timeout = k_default_connect_timeout;
  /// Bound on every operation, including a blocking get().
  std::chrono::milliseconds op_timeout = k_default_op_timeout;
  /// d0 works against ours and torch <= 2.0 servers; d1 = torch 2.1; d2 = VALIDATE era.
  Dialect dialect = Dialect::d0;
  /// Find the server's dialect on the first connect (dialect_probe.hpp) instead of `dialect`,
  /// each probe bounded by min(probe_timeout, what is left of connect_timeout).
  bool detect_dialect = false;
  std::chrono::milliseconds probe_timeout = k_dialect_probe_timeout;
  std::uint64_t max_reply_bytes = k_client_max_reply_bytes;
  AuthMode auth = AuthMode::off;
  std::string token;
};

using KeyValues = std::vector<std::pair<std::string, std::string>>;

/// One connection, one request in flight. Operations connect lazily (with backoff) when not
/// connected; any failure or timeout drops the connection, because the stream may hold a stale
/// reply, and the next operation reconnects. Concurrent operations on one Client fail with
/// ErrorCode::internal. The Client must outlive its pending operations.
class Client {
 public:
  Client(asio::io_context& io, ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  asio::awaitable<Result<void>> connect();
  void close();
  bool is_connected() const;
  /// After a detecting connect: options().dialect is the dialect found.
  const ClientOptions& options() const { return options_; }

  asio::awaitable<Result<void>> set(std::string key, std::string value);
  /// SET, then CHECK on the same connection: SET has no reply in any dialect, so only the
  /// CHECK's READY says the server took it. An error when the key is not there after all.
  asio::awaitable<Result<void>> set_confirmed(std::string key, std::string value);
  /// Blocks (WAIT, then GET) until the key exists or op_timeout passes.
  asio::awaitable<Result<std::string>> get(std::string key);
  asio::awaitable<Result<std::int64_t>> add(std::string key, std::int64_t delta);
  /// PyTorch semantics: returns the value now stored, or `expected` when the key is missing and
  /// `expected` is non-empty (nothing stored).
  asio::awaitable<Result<std::string>> compare_set(std::string key, std::string expected,
                                                   std::string desired);
  /// ErrorCode::timeout when the keys do not all exist within `timeout`.
  asio::awaitable<Result<void>> wait(std::vector<std::string> keys,
                                     std::chrono::milliseconds timeout);
  asio::awaitable<Result<bool>> check(std::vector<std::string> keys);
  asio::awaitable<Result<bool>> delete_key(std::string key);
  asio::awaitable<Result<std::int64_t>> num_keys();
  /// Blocks until all keys exist (WAIT, then MULTI_GET; per-key GET in D0).
  asio::awaitable<Result<std::vector<std::string>>> multi_get(std::vector<std::string> keys);
  /// MULTI_GET without waiting: "" for a missing key. d1 and d2 only.
  asio::awaitable<Result<std::vector<std::string>>> multi_get_now(std::vector<std::string> keys);
  /// MULTI_SET (a run of SETs in D0).
  asio::awaitable<Result<void>> multi_set(KeyValues pairs);
  /// D1/D2 only.
  asio::awaitable<Result<void>> append(std::string key, std::string value);
  /// D2 only (LIST_KEYS).
  asio::awaitable<Result<std::vector<std::string>>> list_keys();

 private:
  asio::awaitable<Result<void>> connect_once(std::chrono::milliseconds budget);
  /// Resolves and connects (TCP_NODELAY; the VALIDATE hello in a known D2); closed on error.
  asio::awaitable<Result<void>> open_socket(std::chrono::milliseconds budget);
  /// Runs the dialect probes and fixes options_.dialect; leaves the last probe's connection
  /// open when it can carry requests.
  asio::awaitable<Result<void>> detect(std::chrono::milliseconds budget);
  asio::awaitable<Result<ProbeOutcome>> run_probe(Probe probe, std::chrono::milliseconds timeout);
  /// "dialect D2", or "dialect detection" while it runs: for messages.
  std::string dialect_label() const;
  asio::awaitable<Result<void>> authenticate();
  /// One COMPARE_SET on the open connection, outside begin()/finish() (used while connecting).
  asio::awaitable<Result<std::string>> exchange(std::string key, std::string expected);
  asio::awaitable<Result<void>> begin(const char* op, std::chrono::milliseconds timeout);
  template <typename T>
  Result<T> finish(Result<T> result);
  void arm(std::chrono::milliseconds timeout);
  void disarm();
  Error io_error(const boost::system::error_code& ec) const;
  asio::awaitable<Result<void>> send(const Request& request);
  asio::awaitable<Result<void>> send_raw(std::string bytes);
  asio::awaitable<Result<std::string>> read_exact(std::size_t n);
  asio::awaitable<Result<std::uint8_t>> read_u8();
  asio::awaitable<Result<std::int64_t>> read_i64();
  asio::awaitable<Result<std::string>> read_bytes();
  asio::awaitable<Result<void>> wait_stop(std::vector<std::string> keys);
  asio::awaitable<Result<std::vector<std::string>>> read_values(std::size_t n);
  /// After begin(): the keys' values in one MULTI_GET (D0: a GET each, which blocks on a
  /// missing key), then finish().
  asio::awaitable<Result<std::vector<std::string>>> fetch_values(std::vector<std::string> keys);

  asio::io_context& io_;
  ClientOptions options_;
  asio::ip::tcp::socket socket_;
  asio::steady_timer deadline_;
  std::shared_ptr<int> alive_;
  std::uint64_t op_gen_ = 0;
  bool connected_ = false;
  bool in_flight_ = false;
  bool timed_out_ = false;
  const char* op_name_ = "connect";
  std::chrono::milliseconds op_budget_{0};
};

/// Blocking facade: owns an io_context and runs it until each operation completes.
class SyncClient {
 public:
  explicit SyncClient(ClientOptions options);
  Result<void> connect();
  Result<void> set(const std::string& key, const std::string& value);
  Result<void> set_confirmed(const std::string& key, const std::string& value);
  Result<std::string> get(const std::string& key);
  Result<std::int64_t> add(const std::string& key, std::int64_t delta);
  Result<std::string> compare_set(const std::string& key, const std::string& expected,
                                  const std::string& desired);
  Result<void> wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);
  Result<bool> check(const std::vector<std::string>& keys);
  Result<bool> delete_key(const std::string& key);
  Result<std::int64_t> num_keys();
  Result<std::vector<std::string>> multi_get(const std::vector<std::string>& keys);
  Result<std::vector<std::string>> multi_get_now(const std::vector<std::string>& keys);
  Result<void> multi_set(const KeyValues& pairs);
  Result<void> append(const std::string& key, const std::string& value);
  Result<std::vector<std::string>> list_keys();
  /// The dialect in use: after a detecting connect, the one found.
  Dialect dialect() const { return client_.options().dialect; }

 private:
  template <typename T>
  Result<T> run(asio::awaitable<Result<T>> op);

  asio::io_context io_;
  Client client_;
};

}  // namespace ddprun::store
