// One store connection. The reader waits for readability and then reads into the registry's
// shared buffer (a per-connection buffer would cost 64 KiB per idle rank), feeds the pure
// Decoder and applies each request to the KvState synchronously; replies and deliveries for
// other connections go through each session's outbox, drained by its writer coroutine.
// An ambiguous legacy opcode 8 (spec §6.2.4) arms a short grace timer: if no byte arrives
// before it fires the request is a D0 DELETE_KEY.

#include "session.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "nonce.hpp"

namespace ddprun::store {
namespace {

std::string describe_peer(const asio::ip::tcp::socket& socket) {
  boost::system::error_code ec;
  const auto ep = socket.remote_endpoint(ec);
  if (ec) {
    return "unknown peer";
  }
  auto addr = ep.address();
  if (addr.is_v6() && addr.to_v6().is_v4_mapped()) {
    addr = asio::ip::make_address_v4(asio::ip::v4_mapped, addr.to_v6());
  }
  return addr.is_v6() ? fmt::format("[{}]:{}", addr.to_string(), ep.port())
                      : fmt::format("{}:{}", addr.to_string(), ep.port());
}

DecodeLimits decode_limits(const ServerOptions& o) {
  return DecodeLimits{o.max_key_bytes, o.max_value_bytes, o.max_keys_per_request,
                      o.max_request_bytes};
}

}  // namespace

Registry::Registry(const ServerOptions& opts)
    : options(opts),
      kv(KvLimits{opts.max_parked_waits_per_connection, k_output_hard_limit_bytes}),
      read_chunk(k_read_chunk_bytes) {}

void Registry::deliver(const Delivery& delivery) {
  const auto it = sessions.find(delivery.conn);
  if (it != sessions.end()) {
    it->second->enqueue(delivery.bytes);
  }
}

void Registry::remove(ConnId id) {
  kv.disconnect(id);
  sessions.erase(id);
}

Session::Session(asio::ip::tcp::socket socket, ConnId id, Registry& registry)
    : socket_(std::move(socket)),
      id_(id),
      registry_(registry),
      peer_(describe_peer(socket_)),
      decoder_(decode_limits(registry.options), registry.options.legacy_dialect),
      write_signal_(socket_.get_executor()),
      drain_signal_(socket_.get_executor()),
      grace_timer_(socket_.get_executor()) {
  write_signal_.expires_at(asio::steady_timer::time_point::max());
  drain_signal_.expires_at(asio::steady_timer::time_point::max());
}

void Session::start() {
  boost::system::error_code ec;
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
  socket_.non_blocking(true, ec);
  auto self = shared_from_this();
  asio::co_spawn(
      socket_.get_executor(), [self] { return self->reader(); }, asio::detached);
  asio::co_spawn(
      socket_.get_executor(), [self] { return self->writer(); }, asio::detached);
}

void Session::enqueue(std::string bytes) {
  if (closed_ || bytes.empty()) {
    return;
  }
  outbox_bytes_ += bytes.size();
  if (outbox_bytes_ > k_output_hard_limit_bytes) {
    close(fmt::format("unsent output of {} bytes exceeds {}", outbox_bytes_,
                      k_output_hard_limit_bytes));
    return;
  }
  outbox_.push_back(std::move(bytes));
  write_signal_.cancel_one();
}

void Session::close(const std::string& reason) {
  if (closed_) {
    return;
  }
  closed_ = true;
  if (!reason.empty()) {
    spdlog::warn("store: closing connection from {}: {}", peer_, reason);
  }
  boost::system::error_code ec;
  socket_.close(ec);
  write_signal_.cancel();
  drain_signal_.cancel();
  grace_timer_.cancel();
  outbox_.clear();
  registry_.remove(id_);  // may drop the registry's reference; coroutines hold `self`
}

asio::awaitable<void> Session::reader() {
  auto self = shared_from_this();
  boost::system::error_code ec;
  while (!closed_) {
    co_await socket_.async_wait(asio::ip::tcp::socket::wait_read,
                                asio::redirect_error(asio::use_awaitable, ec));
    if (closed_) {
      break;
    }
    if (ec) {
      close("");
      break;
    }
    const std::size_t n = socket_.read_some(asio::buffer(registry_.read_chunk), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) {
      continue;
    }
    if (ec) {
      spdlog::debug("store: connection from {} ended: {}", peer_, ec.message());
      close("");  // EOF or reset: the peer went away, nothing malformed
      break;
    }
    on_bytes(n);
    co_await wait_for_drain();
  }
}

asio::awaitable<void> Session::wait_for_drain() {
  boost::system::error_code ec;
  while (!closed_ && outbox_bytes_ > k_output_high_water_bytes) {
    co_await drain_signal_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

asio::awaitable<void> Session::writer() {
  auto self = shared_from_this();
  boost::system::error_code ec;
  while (!closed_) {
    if (outbox_.empty()) {
      co_await write_signal_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    const std::string& front = outbox_.front();
    co_await asio::async_write(socket_, asio::buffer(front),
                               asio::redirect_error(asio::use_awaitable, ec));
    if (closed_) {
      break;
    }
    if (ec) {
      close(fmt::format("write: {}", ec.message()));
      break;
    }
    outbox_bytes_ -= outbox_.front().size();
    outbox_.pop_front();
    if (outbox_bytes_ <= k_output_high_water_bytes) {
      drain_signal_.cancel();
    }
  }
}

void Session::on_bytes(std::size_t n) {
  decoder_.feed(std::string_view(registry_.read_chunk.data(), n));
  ++grace_gen_;
  grace_timer_.cancel();
  process();
}

void Session::process() {
  while (!closed_) {
    auto result = decoder_.next();
    switch (result.status) {
      case DecodeStatus::need_more:
        return;
      case DecodeStatus::ambiguous:
        arm_grace();
        return;
      case DecodeStatus::error:
        close(fmt::format("malformed request: {}", result.error));
        return;
      case DecodeStatus::request:
        apply(result.request);
        break;
    }
  }
}

bool Session::guard(const Request& request) {
  const std::string& token = registry_.options.token;
  if (token.empty()) {
    return false;
  }
  if (is_auth_request(request)) {
    const auto step = server_auth_step(token, auth_, request, random_nonce_hex());
    if (step.warning) {
      spdlog::warn("store: rendezvous authentication from {} failed: {}", peer_, *step.warning);
    }
    std::string reply;
    put_bytes(reply, step.reply);
    enqueue(std::move(reply));
    return true;
  }
  if (auth_.authenticated) {
    return false;
  }
  if (auto denial = access_denial(request)) {
    close(*denial);
    return true;
  }
  return false;
}

void Session::apply(const Request& request) {
  if (guard(request)) {
    return;
  }
  const bool hide = !registry_.options.token.empty() && !auth_.authenticated;
  Effects fx = registry_.kv.apply(id_, request, hide ? k_protected_prefix : std::string_view());
  for (const auto& d : fx.deliveries) {
    registry_.deliver(d);
  }
  enqueue(std::move(fx.reply));
  if (fx.close_reason) {
    close(*fx.close_reason);
  }
}

void Session::arm_grace() {
  grace_timer_.expires_after(registry_.options.opcode8_grace);
  grace_timer_.async_wait(
      [self = shared_from_this(), gen = grace_gen_](boost::system::error_code ec) {
        if (ec || self->closed_ || gen != self->grace_gen_) {
          return;
        }
        self->decoder_.resolve_silence();
        self->process();
      });
}

}  // namespace ddprun::store
