#pragma once
// An etcd v3 client over the JSON gateway (HTTP/1.1, plain or TLS) on the caller's
// single-threaded io_context. Every call is a coroutine returning Result and is bounded by
// ClientOptions::call_timeout per member tried; a call fails over to the next member on a
// connection error or an "unavailable / no leader" answer, so it takes at most
// endpoints x call_timeout; a call etcd refuses as overloaded ("too many requests") is sent
// again to the same member after a growing, randomised pause (at most k_max_overload_resends
// times, about 3 s more). Concurrent calls are fine: each takes its own pooled connection.
//
// Errors: ErrorCode::io (no member answered; the message lists each member's failure),
// ErrorCode::timeout (the last member timed out), ErrorCode::protocol (etcd refused the
// request: the message carries etcd's text and gRPC code), ErrorCode::config (TLS files, auth).

#include "ddprun/etcd/endpoints.hpp"
#include "ddprun/etcd/types.hpp"
#include "ddprun/net/asio.hpp"
#include "ddprun/util/result.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace ddprun::etcd {

inline constexpr std::chrono::milliseconds k_default_call_timeout{5000};

/// PEM files for https:// members: the CA that signed them, and an optional client certificate
/// with its key (for --client-cert-auth clusters).
struct TlsFiles {
  std::string ca_file;  // empty: the system's default CA paths
  std::string cert_file;
  std::string key_file;
};

struct ClientOptions {
  std::vector<Endpoint> endpoints;
  TlsFiles tls;
  /// etcd user/password auth (the caller reads the password from a file); empty: no auth.
  std::string username;
  std::string password;
  std::chrono::milliseconds call_timeout = k_default_call_timeout;
  /// The member asked first (an index into `endpoints`, modulo their count); a failure moves
  /// on to the next. Agents start at a random one, so every member's JSON gateway carries a
  /// share of the agents' calls and watch streams instead of the first member carrying all.
  std::size_t first_member = 0;
};

class Connection;
class Watch;

/// A random lease ID for Client::lease_grant: positive and below 2^62 (etcd takes any positive
/// int64), from the kernel's entropy, so the IDs of thousands of agents started at once differ
/// (with L leases alive, a new ID meets one of them with odds L / 4.6e18).
LeaseId new_lease_id();

class Client {
 public:
  /// ErrorCode::config when the endpoint list is empty or a TLS file cannot be loaded.
  static Result<std::unique_ptr<Client>> make(asio::io_context& io, ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // --- kv ---
  asio::awaitable<Result<RangeResult>> range(RangeRequest r);
  /// One key, or nullopt when absent.
  asio::awaitable<Result<std::optional<KeyValue>>> get(std::string key);
  /// Returns the revision of the write.
  asio::awaitable<Result<Revision>> put(PutRequest p);
  asio::awaitable<Result<DeleteResult>> erase(DeleteRequest d);
  /// A txn is not retried on another member once its request was sent (it may have been
  /// applied), except when etcd said it has no leader, when it only reads, or when the caller
  /// knows a second run finds and answers what the first did (`resend_safe`: a compare-and-set
  /// of one value, puts of the same values, a counter's add by its own key's name).
  asio::awaitable<Result<TxnResult>> txn(TxnRequest t, bool resend_safe = false);

  // --- lease ---
  /// Grants a lease of ID `id` (new_lease_id(); 0 lets etcd choose). With an ID chosen here a
  /// grant is safe to send again, by this call's failover or by the caller after a failure
  /// (keep the ID until one succeeds): a send that etcd applied but whose answer was lost
  /// leaves the lease that a later send finds ("lease already exists") and renews, instead of
  /// one more lease that nobody renews.
  asio::awaitable<Result<Lease>> lease_grant(std::chrono::seconds ttl, LeaseId id);
  /// Renews once; a returned TTL of 0 means the lease no longer exists.
  asio::awaitable<Result<Lease>> lease_keepalive_once(LeaseId id);
  asio::awaitable<Result<void>> lease_revoke(LeaseId id);

  // --- watch ---
  /// Opens a watch stream on its own connection and returns once etcd confirmed it ("created"),
  /// so every change after `start_revision` (or after now) is delivered by Watch::next().
  asio::awaitable<Result<std::unique_ptr<Watch>>> watch(WatchRequest w);

  asio::any_io_executor executor() const { return io_.get_executor(); }
  /// The member the next call tries first.
  const Endpoint& current_endpoint() const;
  const ClientOptions& options() const { return options_; }

 private:
  friend class Watch;
  Client(asio::io_context& io, ClientOptions options);
  asio::awaitable<Result<std::string>> call(std::string_view path, std::string body,
                                            bool idempotent);
  asio::awaitable<Result<std::unique_ptr<Connection>>> checkout();
  void checkin(std::unique_ptr<Connection> c);
  void fail_over();
  asio::awaitable<void> pause(std::chrono::milliseconds d);
  asio::awaitable<Result<void>> ensure_token(Connection& c);

  asio::io_context& io_;
  ClientOptions options_;
  std::unique_ptr<asio::ssl::context> tls_;  // null when no member is https://
  std::size_t current_ = 0;
  std::vector<std::unique_ptr<Connection>> idle_;
  std::string token_;
};

/// A watch stream. next() delivers each message (events, progress, or a cancel); after a
/// server-side cancel (compacted start revision, or etcd's own cancel) the next call returns
/// ErrorCode::closed. When the member goes away the stream resumes on another one from the
/// revision after the last delivered. cancel() ends it from any coroutine: a pending next()
/// returns ErrorCode::closed. The Client must outlive its Watch, and a Watch is destroyed only
/// when no next() is pending (cancel(), then let next() return).
class Watch {
 public:
  ~Watch();
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;

  asio::awaitable<Result<WatchMessage>> next();
  void cancel();
  bool is_cancelled() const { return cancelled_; }
  /// The member carrying the stream (host:port), for messages; "" before it opened.
  std::string member() const;

 private:
  friend class Client;
  Watch(Client& client, WatchRequest request);
  struct Stream;
  asio::awaitable<Result<void>> open();
  asio::awaitable<Result<void>> open_on_current();
  asio::awaitable<Result<std::string>> next_line();
  void note_revision(const WatchMessage& m);

  Client& client_;
  WatchRequest request_;
  std::unique_ptr<Stream> stream_;
  std::vector<std::string> lines_;  // complete messages not yet delivered
  std::string partial_;
  Revision last_revision_ = 0;  // every change up to here was delivered
  bool cancelled_ = false;
  bool ended_ = false;
};

/// Keeps a lease alive: renews about every TTL/3, sooner after a renewal no member answered
/// (renewal.hpp), until stop(); reports loss once through `on_lost` (etcd says the lease
/// expired, or no renewal was answered for two TTLs) and ends. The Client must
/// outlive the loop: co_await stop() before destroying either.
class LeaseKeeper {
 public:
  using OnLost = std::function<void(const Error&)>;
  LeaseKeeper(Client& client, Lease lease, OnLost on_lost);
  ~LeaseKeeper();
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

  void start();
  /// Ends the loop; returns once it has (after at most one call_timeout).
  asio::awaitable<void> stop();
  bool is_running() const;
  bool is_lost() const;

  struct State;  // shared with the loop, so it outlives this object

 private:
  Client& client_;
  std::shared_ptr<State> state_;
};

}  // namespace ddprun::etcd
