// One store connection, callback-driven to keep per-request work and idle memory small: a
// readiness wait, then non-blocking reads into the registry's shared buffer (a per-connection
// buffer would cost 64 KiB per idle rank), the pure Decoder and KvState applied synchronously
// to every complete request, every reply appended to one output buffer and sent with one
// write at the end of the event (the same for deliveries to other connections, through
// Registry::flush_dirty). Only when the kernel takes less than everything does the session
// wait for writability. An ambiguous legacy opcode 8 (spec §6.2.4) arms a short grace timer:
// if no byte arrives before it fires the request is a D0 DELETE_KEY.

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

bool would_block(const boost::system::error_code& ec) {
  return ec == asio::error::would_block || ec == asio::error::try_again;
}

/// Bytes a request would add to the stored data (keys and values), 0 for ops that store none.
std::size_t stored_growth(const Request& r) {
  switch (r.op) {
    case Op::set:
    case Op::append:
    case Op::queue_push:
      return r.key.size() + r.value.size();
    case Op::compare_set:
      return r.key.size() + r.desired.size();
    case Op::multi_set: {
      std::size_t n = 0;
      for (const auto& [k, v] : r.pairs) {
        n += k.size() + v.size();
      }
      return n;
    }
    default:
      return 0;
  }
}

}  // namespace

Registry::Registry(const ServerOptions& opts)
    : options(opts),
      kv(KvLimits{opts.max_parked_waits_per_connection, k_output_hard_limit_bytes,
                  opts.max_parked_waits}),
      read_chunk(k_read_chunk_bytes) {}

void Registry::deliver(const Delivery& delivery) {
  const auto it = sessions.find(delivery.conn);
  if (it == sessions.end()) {
    return;
  }
  const std::shared_ptr<Session> target = it->second;  // enqueue may close and erase it
  target->enqueue(delivery.bytes);
  if (!target->queued_for_flush) {
    target->queued_for_flush = true;
    dirty.push_back(target);
  }
}

void Registry::remove(ConnId id) {
  kv.disconnect(id);
  sessions.erase(id);
}

void Registry::flush_dirty() {
  while (!dirty.empty()) {
    std::vector<std::shared_ptr<Session>> batch;
    batch.swap(dirty);
    for (const auto& s : batch) {
      s->queued_for_flush = false;
      s->flush();
    }
  }
}

Session::Session(asio::ip::tcp::socket socket, ConnId id, Registry& registry)
    : socket_(std::move(socket)),
      id_(id),
      registry_(registry),
      decoder_(decode_limits(registry.options), registry.options.legacy_dialect,
               registry.options.hello_policy) {}

void Session::start() {
  boost::system::error_code ec;
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
  socket_.non_blocking(true, ec);
  arm_read();
}

void Session::arm_read() {
  reading_ = true;
  socket_.async_wait(
      asio::ip::tcp::socket::wait_read,
      [self = shared_from_this()](const boost::system::error_code& ec) { self->on_readable(ec); });
}

void Session::arm_write() {
  writing_ = true;
  socket_.async_wait(
      asio::ip::tcp::socket::wait_write,
      [self = shared_from_this()](const boost::system::error_code& ec) { self->on_writable(ec); });
}

void Session::on_readable(const boost::system::error_code& ec) {
  reading_ = false;
  if (closed_) {
    return;
  }
  if (ec) {
    close("");
    return;
  }
  const auto decoded_before = decoder_.decoded();
  if (read_input()) {
    finish_event(decoder_.decoded() != decoded_before);
  }
}

/// Reads and processes up to k_reads_per_event chunks; false when the connection closed.
bool Session::read_input() {
  for (std::size_t i = 0; i < k_reads_per_event && !paused_; ++i) {
    boost::system::error_code ec;
    const std::size_t n = socket_.read_some(asio::buffer(registry_.read_chunk), ec);
    if (would_block(ec)) {
      return true;
    }
    if (ec) {
      spdlog::debug("store: connection {} ended: {}", id_, ec.message());
      flush();  // best effort: replies to what this event already applied
      registry_.flush_dirty();
      close("");  // EOF or reset: the peer went away, nothing malformed
      return false;
    }
    if (muted_) {
      continue;  // a libuv-like server ignoring a connection that did not open with VALIDATE
    }
    decoder_.feed(std::string_view(registry_.read_chunk.data(), n));
    if (grace_timer_) {
      ++grace_gen_;
      grace_timer_->cancel();
    }
    process();
    if (closed_ || n < registry_.read_chunk.size()) {
      return !closed_;
    }
  }
  return !closed_;
}

void Session::process() {
  while (!closed_ && !paused_) {
    auto result = decoder_.next();
    switch (result.status) {
      case DecodeStatus::need_more:
        return;
      case DecodeStatus::ambiguous:
        arm_grace();
        return;
      case DecodeStatus::unvalidated:
        muted_ = registry_.options.ignore_unvalidated;
        if (!muted_) {
          close(result.error);
        }
        return;
      case DecodeStatus::error:
        ++registry_.counters.dropped_malformed;
        close(fmt::format("malformed request: {}", result.error));
        return;
      case DecodeStatus::request:
        apply(result.request);
        paused_ = pending_output() > k_output_high_water_bytes;
        break;
    }
  }
}

/// End of a read (or resume) event: send, track a partial request, check the memory cap,
/// wait for more input unless paused.
void Session::finish_event(bool progress) {
  flush();
  registry_.flush_dirty();
  if (closed_) {
    return;
  }
  account_input();
  if (decoder_.buffered() == 0) {
    partial_since_ = {};
  } else if (progress || partial_since_ == SessionClock::time_point{}) {
    partial_since_ = SessionClock::now();
  }
  if (decoder_.buffered() > 0 && registry_.memory_in_use() > registry_.options.max_memory_bytes) {
    ++registry_.counters.dropped_memory;
    close(fmt::format("partial request of {} bytes refused: server memory cap of {} bytes reached",
                      decoder_.buffered(), registry_.options.max_memory_bytes));
    return;
  }
  if (!paused_ && !reading_) {
    arm_read();
  }
}

void Session::account_input() {
  const std::size_t now = decoder_.buffered();
  registry_.input_bytes = registry_.input_bytes - accounted_input_ + now;
  accounted_input_ = now;
}

bool Session::refuse_for_memory(const Request& request) {
  const std::size_t growth = stored_growth(request);
  const std::size_t cap = registry_.options.max_memory_bytes;
  // This connection's buffered input holds the request itself: not counted twice.
  const std::size_t in_use = registry_.memory_in_use() - accounted_input_;
  if (growth == 0 || in_use + growth <= cap) {
    return false;
  }
  ++registry_.counters.dropped_memory;
  close(
      fmt::format("{} of key '{}' ({} bytes) refused: server memory cap of {} bytes reached "
                  "({} in use)",
                  to_string(request.op), loggable_key(request.key), growth, cap, in_use));
  return true;
}

bool Session::guard(const Request& request) {
  const std::string& token = registry_.options.token;
  if (token.empty()) {
    return false;
  }
  if (is_auth_request(request)) {
    const auto step = server_auth_step(token, auth_, request, random_nonce_hex());
    if (step.warning) {
      spdlog::warn("store: rendezvous authentication from {} failed: {}", describe_peer(socket_),
                   *step.warning);
    }
    std::string reply;
    put_bytes(reply, step.reply);
    append(reply);
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
  if (request.op == Op::ping && !registry_.options.answer_ping) {
    close("unknown opcode PING");  // emulating a VALIDATE-era server from before PING
    return;
  }
  if (request.op == Op::list_keys && !registry_.options.answer_list_keys) {
    close("unknown opcode LIST_KEYS");  // emulating a PyTorch server from before ~2.10
    return;
  }
  if (guard(request) || refuse_for_memory(request)) {
    return;
  }
  ++registry_.counters.requests;
  const bool hide = !registry_.options.token.empty() && !auth_.authenticated;
  Effects fx = registry_.kv.apply(id_, request, hide ? k_protected_prefix : std::string_view());
  for (const auto& d : fx.deliveries) {
    registry_.deliver(d);
  }
  append(fx.reply);
  if (fx.close_reason) {
    ++registry_.counters.dropped_malformed;
    close(*fx.close_reason);
  }
}

void Session::enqueue(std::string_view bytes) { append(bytes); }

void Session::append(std::string_view bytes) {
  if (closed_ || bytes.empty()) {
    return;
  }
  const std::size_t pending = pending_output() + bytes.size();
  if (pending > k_output_hard_limit_bytes) {
    close(fmt::format("unsent output of {} bytes exceeds {}", pending, k_output_hard_limit_bytes));
    return;
  }
  if (registry_.memory_in_use() + bytes.size() > registry_.options.max_memory_bytes) {
    ++registry_.counters.dropped_memory;
    close(fmt::format("reply of {} bytes refused: server memory cap of {} bytes reached",
                      bytes.size(), registry_.options.max_memory_bytes));
    return;
  }
  out_.append(bytes);
  registry_.output_bytes += bytes.size();
}

void Session::flush() {
  if (closed_ || writing_ || pending_output() == 0) {
    return;
  }
  boost::system::error_code ec;
  const std::size_t n =
      socket_.write_some(asio::buffer(out_.data() + out_sent_, pending_output()), ec);
  if (ec && !would_block(ec)) {
    close(fmt::format("write: {}", ec.message()));
    return;
  }
  sent(ec ? 0 : n);
  if (pending_output() > 0) {
    arm_write();
  }
}

void Session::sent(std::size_t n) {
  out_sent_ += n;
  registry_.output_bytes -= n;
  if (out_sent_ < out_.size()) {
    return;
  }
  out_.clear();
  out_sent_ = 0;
  if (out_.capacity() > k_idle_buffer_keep_bytes) {
    std::string().swap(out_);
  }
}

void Session::on_writable(const boost::system::error_code& ec) {
  writing_ = false;
  if (closed_) {
    return;
  }
  if (ec) {
    close("");
    return;
  }
  flush();
  if (closed_ || !paused_ || pending_output() > k_output_low_water_bytes) {
    return;
  }
  paused_ = false;  // drained: apply what was read meanwhile, then read again
  const auto decoded_before = decoder_.decoded();
  process();
  finish_event(decoder_.decoded() != decoded_before);
}

bool Session::stalled(SessionClock::time_point now, std::chrono::milliseconds timeout) const {
  return !closed_ && !paused_ && partial_since_ != SessionClock::time_point{} &&
         now - partial_since_ > timeout;
}

void Session::close(std::string_view reason) {
  if (closed_) {
    return;
  }
  closed_ = true;
  if (!reason.empty()) {
    spdlog::warn("store: closing connection from {}: {}", describe_peer(socket_), reason);
  }
  boost::system::error_code ec;
  socket_.close(ec);
  if (grace_timer_) {
    grace_timer_->cancel();
  }
  registry_.output_bytes -= pending_output();
  registry_.input_bytes -= accounted_input_;
  accounted_input_ = 0;
  std::string().swap(out_);
  out_sent_ = 0;
  registry_.remove(id_);  // may drop the registry's reference; handlers hold `self`
}

void Session::arm_grace() {
  if (!grace_timer_) {
    grace_timer_ = std::make_unique<asio::steady_timer>(socket_.get_executor());
  }
  grace_timer_->expires_after(registry_.options.opcode8_grace);
  grace_timer_->async_wait(
      [self = shared_from_this(), gen = grace_gen_](boost::system::error_code ec) {
        if (ec || self->closed_ || gen != self->grace_gen_) {
          return;
        }
        self->decoder_.resolve_silence();
        self->process();
        self->finish_event(true);
      });
}

}  // namespace ddprun::store
