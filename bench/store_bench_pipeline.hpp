#pragma once
// store_bench's pipelined mode: raw D0 requests on a plain socket, `depth` requests written in
// one write, then their replies read back (buffered). Per-op latency = batch write to the
// op's reply. A SET has no D0 reply: it completes with the next reply in its batch, or when the
// end of its batch if nothing with a reply follows it.

#include "ddprun/net/asio.hpp"
#include "ddprun/store/protocol.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::bench {

inline constexpr std::size_t k_read_chunk = 64 * 1024;

/// Bytes of the D0 reply to `op` at the front of `buf`: 0 while incomplete (or for SET).
inline std::size_t d0_reply_size(store::Op op, std::string_view buf) {
  constexpr std::size_t k_word = 8;
  switch (op) {
    case store::Op::add:
      return buf.size() >= k_word ? k_word : 0;
    case store::Op::check:
      return buf.empty() ? 0 : 1;
    case store::Op::get: {
      if (buf.size() < k_word) {
        return 0;
      }
      const auto total = k_word + store::get_u64(buf.substr(0, k_word));
      return buf.size() >= total ? static_cast<std::size_t>(total) : 0;
    }
    default:
      return 0;
  }
}

struct PipelineStats {
  std::vector<double> latencies_us;
  std::size_t errors = 0;
};

using PipeClock = std::chrono::steady_clock;

/// Received bytes not yet matched to a reply: consumed from `pos`, refilled at the end.
struct ReplyBuffer {
  std::vector<char> data = std::vector<char>(k_read_chunk);
  std::size_t pos = 0;
  std::size_t len = 0;
  std::string_view view() const { return {data.data() + pos, len - pos}; }
  /// Moves the unread tail to the front so that a read always has room.
  void compact() {
    std::copy(data.begin() + static_cast<std::ptrdiff_t>(pos),
              data.begin() + static_cast<std::ptrdiff_t>(len), data.begin());
    len -= pos;
    pos = 0;
    if (len == data.size()) {
      data.resize(data.size() * 2);
    }
  }
};

/// Reads and times the replies of `ops` (in order) from `sock`; false on an I/O error.
/// Replies are read in bulk: one read usually returns the whole batch.
inline asio::awaitable<bool> read_replies(asio::ip::tcp::socket& sock, ReplyBuffer& buf,
                                          const std::vector<store::Op>& ops,
                                          PipeClock::time_point sent, PipelineStats& stats) {
  std::size_t unreplied_sets = 0;
  auto record = [&](std::size_t n) {
    const double us = std::chrono::duration<double, std::micro>(PipeClock::now() - sent).count();
    stats.latencies_us.insert(stats.latencies_us.end(), n, us);
  };
  for (const auto op : ops) {
    if (op == store::Op::set) {
      ++unreplied_sets;
      continue;
    }
    std::size_t size = 0;
    while ((size = d0_reply_size(op, buf.view())) == 0) {
      buf.compact();
      boost::system::error_code ec;
      const auto n = co_await sock.async_read_some(
          asio::buffer(buf.data.data() + buf.len, buf.data.size() - buf.len),
          asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        co_return false;
      }
      buf.len += n;
    }
    buf.pos += size;
    record(unreplied_sets + 1);
    unreplied_sets = 0;
  }
  record(unreplied_sets);
  co_return true;
}

}  // namespace ddprun::bench
