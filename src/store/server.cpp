// Server: binding (dual-stack, SO_REUSEADDR, large backlog), the accept loop with a
// connection cap, the open-file limit, the sweep that drops connections stalled inside a
// request (slowloris), and shutdown through the session registry (Asio's http server
// do_await_stop + connection_manager::stop_all).

#include "ddprun/store/server.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <sys/resource.h>

#include <algorithm>
#include <vector>

#include "session.hpp"

namespace ddprun::store {
namespace {

using asio::ip::tcp;

/// File descriptors kept free for everything that is not a store connection.
constexpr std::size_t k_reserved_fds = 64;
constexpr std::uint64_t k_reject_log_every = 1000;

/// Raises the soft RLIMIT_NOFILE to the hard limit; returns the resulting soft limit.
std::size_t raise_open_file_limit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) {
    return 0;
  }
  if (lim.rlim_cur < lim.rlim_max) {
    rlimit raised = lim;
    raised.rlim_cur = lim.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) {
      lim = raised;
    }
  }
  return lim.rlim_cur == RLIM_INFINITY ? SIZE_MAX : static_cast<std::size_t>(lim.rlim_cur);
}

boost::system::error_code open_and_bind(tcp::acceptor& acceptor, const tcp::endpoint& ep,
                                        bool dual) {
  boost::system::error_code ec;
  acceptor.open(ep.protocol(), ec);
  if (ec) {
    return ec;
  }
  acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (dual) {
    acceptor.set_option(asio::ip::v6_only(false), ec);
  }
  acceptor.bind(ep, ec);
  if (!ec) {
    acceptor.listen(k_listen_backlog, ec);
  }
  if (ec) {
    boost::system::error_code ignored;
    acceptor.close(ignored);
  }
  return ec;
}

boost::system::error_code bind_host(tcp::acceptor& acceptor, const std::string& host,
                                    std::uint16_t port) {
  if (host.empty() || host == "::") {
    auto ec = open_and_bind(acceptor, tcp::endpoint(tcp::v6(), port), true);
    if (ec != asio::error::address_family_not_supported) {
      return ec;
    }
    return open_and_bind(acceptor, tcp::endpoint(tcp::v4(), port), false);
  }
  if (host == "0.0.0.0") {
    return open_and_bind(acceptor, tcp::endpoint(tcp::v4(), port), false);
  }
  boost::system::error_code ec;
  tcp::resolver resolver(acceptor.get_executor());
  const auto results = resolver.resolve(host, std::to_string(port), ec);
  if (ec) {
    return ec;
  }
  for (const auto& entry : results) {
    ec = open_and_bind(acceptor, entry.endpoint(), false);
    if (!ec) {
      return ec;
    }
  }
  return ec;
}

}  // namespace

struct Server::Impl : std::enable_shared_from_this<Server::Impl> {
  Impl(asio::io_context& io, const ServerOptions& opts)
      : acceptor(io), backoff(io), sweep(io), registry(opts), limit(opts.max_connections) {}

  asio::awaitable<void> accept_loop();
  void admit(tcp::socket socket);
  void apply_fd_limit();
  void arm_sweep();
  void drop_stalled();
  void stop();

  tcp::acceptor acceptor;
  asio::steady_timer backoff;
  asio::steady_timer sweep;
  Registry registry;
  std::size_t limit;
  bool stopped = false;
};

/// frame_timeout / 4, clamped: a stalled connection goes within 1.25 x the timeout.
std::chrono::milliseconds sweep_interval(std::chrono::milliseconds timeout) {
  return std::clamp(timeout / 4, k_min_sweep_interval, k_max_sweep_interval);
}

void Server::Impl::arm_sweep() {
  const auto timeout = registry.options.frame_timeout;
  if (timeout.count() <= 0 || stopped) {
    return;
  }
  sweep.expires_after(sweep_interval(timeout));
  sweep.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec || self->stopped) {
      return;
    }
    self->drop_stalled();
    self->arm_sweep();
  });
}

void Server::Impl::drop_stalled() {
  const auto now = SessionClock::now();
  const auto timeout = registry.options.frame_timeout;
  std::vector<std::shared_ptr<Session>> stalled;
  for (const auto& [id, session] : registry.sessions) {
    if (session->stalled(now, timeout)) {
      stalled.push_back(session);
    }
  }
  for (const auto& session : stalled) {
    ++registry.counters.dropped_stalled;
    session->close(fmt::format("incomplete request of {} bytes stalled for more than {} ms",
                               session->buffered_input(), timeout.count()));
  }
}

void Server::Impl::apply_fd_limit() {
  const std::size_t soft = raise_open_file_limit();
  if (soft == 0 || soft == SIZE_MAX) {
    return;
  }
  const std::size_t by_fds = soft > k_reserved_fds ? soft - k_reserved_fds : 1;
  if (by_fds < limit) {
    spdlog::info(
        "store: open-file limit {} caps connections at {} (configured {}); raise "
        "`ulimit -n` for larger jobs",
        soft, by_fds, limit);
    limit = by_fds;
  }
}

asio::awaitable<void> Server::Impl::accept_loop() {
  auto self = shared_from_this();
  while (!stopped) {
    boost::system::error_code ec;
    tcp::socket socket =
        co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (stopped) {
      break;
    }
    if (!ec) {
      admit(std::move(socket));
      continue;
    }
    spdlog::warn("store: accept: {}; retrying in {} ms", ec.message(),
                 k_accept_error_backoff.count());
    backoff.expires_after(k_accept_error_backoff);
    co_await backoff.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

void Server::Impl::admit(tcp::socket socket) {
  if (registry.sessions.size() >= limit) {
    auto& refused = registry.counters.refused_connections;
    if (refused++ % k_reject_log_every == 0) {
      spdlog::warn("store: refusing connection: {} connections open (limit {}; {} refused)",
                   registry.sessions.size(), limit, refused);
    }
    boost::system::error_code ec;
    socket.close(ec);
    return;
  }
  const ConnId id = registry.next_id++;
  auto session = std::make_shared<Session>(std::move(socket), id, registry);
  registry.sessions.emplace(id, session);
  session->start();
}

void Server::Impl::stop() {
  stopped = true;
  boost::system::error_code ec;
  acceptor.close(ec);
  backoff.cancel();
  sweep.cancel();
  auto sessions = registry.sessions;  // close() erases from the registry
  for (auto& [id, session] : sessions) {
    session->close("");
  }
}

Server::Server(asio::io_context& io, const ServerOptions& options)
    : impl_(std::make_shared<Impl>(io, options)) {}

// Closing sockets and cancelling a timer may throw (Asio's throwing overloads); a destructor
// that lets it escape would terminate the launcher instead of just losing the store.
Server::~Server() {
  try {
    impl_->stop();
  } catch (const std::exception& e) {
    spdlog::warn("store: stopping the server: {}", e.what());
  }
}

Result<void> Server::listen(const std::string& host, std::uint16_t port) {
  const auto ec = bind_host(impl_->acceptor, host, port);
  if (ec) {
    return make_error(ErrorCode::io, fmt::format("bind {}:{}: {}", host, port, ec.message()));
  }
  impl_->apply_fd_limit();
  impl_->arm_sweep();
  auto impl = impl_;
  asio::co_spawn(
      impl_->acceptor.get_executor(), [impl] { return impl->accept_loop(); }, asio::detached);
  return {};
}

std::uint16_t Server::port() const {
  boost::system::error_code ec;
  const auto ep = impl_->acceptor.local_endpoint(ec);
  return ec ? 0 : ep.port();
}

void Server::stop() { impl_->stop(); }
std::size_t Server::connection_count() const { return impl_->registry.sessions.size(); }
std::size_t Server::connection_limit() const { return impl_->limit; }
const KvState& Server::state() const { return impl_->registry.kv; }

ServerStats Server::stats() const {
  const Registry& r = impl_->registry;
  ServerStats s = r.counters;
  s.connections = r.sessions.size();
  s.stored_bytes = r.kv.bytes();
  s.input_bytes = r.input_bytes;
  s.output_bytes = r.output_bytes;
  s.parked_waits = r.kv.parked_waits();
  return s;
}

void Server::set_local(const std::string& key, std::string value) {
  constexpr ConnId k_no_connection = 0;  // session ids start at 1
  const Effects fx =
      impl_->registry.kv.apply(k_no_connection, Request{Op::set, key, std::move(value)});
  for (const auto& d : fx.deliveries) {
    impl_->registry.deliver(d);
  }
  impl_->registry.flush_dirty();
}

std::size_t Server::erase_prefix(std::string_view prefix) {
  return impl_->registry.kv.erase_prefix(prefix);
}

}  // namespace ddprun::store
