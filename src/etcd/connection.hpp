#pragma once
// One HTTP/1.1 connection to one etcd member, plain or TLS: connect (resolve, TCP, handshake),
// a unary exchange, and the pieces a stream needs. Every step is bounded by the timeout given
// (Beast's tcp_stream deadline); errors come back as Result, never as exceptions.

#include "ddprun/etcd/client.hpp"
#include "ddprun/net/asio.hpp"

#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <variant>

namespace ddprun::etcd {

namespace beast = boost::beast;
namespace http = beast::http;

/// Largest unary reply read (a range over many keys); streams have no total limit.
inline constexpr std::uint64_t k_max_reply_bytes = 64ULL * 1024 * 1024;

struct HttpReply {
  unsigned status = 0;
  std::string body;
};

/// What happened to a unary exchange that failed: whether etcd may have seen the request.
struct ExchangeError {
  Error error;
  bool sent = false;
  /// A pooled connection the member had closed while idle: retry on a fresh one, same member.
  bool stale = false;
};

using StreamParser = http::response_parser<http::string_body>;

class Connection {
 public:
  /// `tls` is required when the endpoint is https://.
  Connection(asio::any_io_executor ex, asio::ssl::context* tls, Endpoint endpoint,
             std::size_t index);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  asio::awaitable<Result<void>> connect(std::chrono::milliseconds timeout);
  /// POST `path` with `body`; the reply, whatever its status.
  asio::awaitable<std::variant<HttpReply, ExchangeError>> exchange(
      const std::string& path, const std::string& body, const std::string& token,
      std::chrono::milliseconds timeout);

  // --- streams: send the request, read the header, then read_some until done ---
  asio::awaitable<Result<void>> send(const std::string& path, const std::string& body,
                                     const std::string& token, std::chrono::milliseconds timeout);
  asio::awaitable<Result<void>> read_header(StreamParser& parser,
                                            std::chrono::milliseconds timeout);
  /// Reads what arrives, without a deadline (cancel with close()).
  asio::awaitable<Result<void>> read_some(StreamParser& parser);

  /// Cancels pending operations (they complete with operation_aborted) and closes the socket.
  void close();
  bool is_open() const { return open_; }
  /// Called when the connection goes back to the pool: a later failure to read a reply may
  /// then be the member having closed it while idle.
  void mark_reused() { reused_ = true; }
  const Endpoint& endpoint() const { return endpoint_; }
  /// The position of endpoint() in the client's list.
  std::size_t index() const { return index_; }

 private:
  beast::tcp_stream& tcp();
  http::request<http::string_body> make_request(const std::string& path, const std::string& body,
                                                const std::string& token) const;
  Error fail(std::string_view what, const boost::system::error_code& ec) const;

  Endpoint endpoint_;
  std::size_t index_;
  std::unique_ptr<beast::tcp_stream> plain_;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls_;
  beast::flat_buffer buffer_;
  bool open_ = false;
  bool reused_ = false;
};

}  // namespace ddprun::etcd
