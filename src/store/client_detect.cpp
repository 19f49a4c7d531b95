// Client dialect detection (dialect_probe.hpp, spec §6.3): each probe on a fresh connection,
// bounded by the probe timeout; the verdict table decides what the outcome means.

#include "ddprun/store/client.hpp"

#include <fmt/format.h>

#include <unistd.h>  // getpid

#include <algorithm>

namespace ddprun::store {

asio::awaitable<Result<ProbeOutcome>> Client::run_probe(Probe probe,
                                                        std::chrono::milliseconds timeout) {
  auto opened = co_await open_socket(timeout);
  if (!opened) {
    co_return opened.error();
  }
  const auto nonce = static_cast<std::uint32_t>(::getpid());
  op_name_ = "dialect probe";
  arm(timeout);
  boost::system::error_code ec;
  const std::string request = probe_request(probe, nonce);
  co_await asio::async_write(socket_, asio::buffer(request),
                             asio::redirect_error(asio::use_awaitable, ec));
  std::string reply(probe_reply_size(probe), '\0');
  if (!ec) {
    co_await asio::async_read(socket_, asio::buffer(reply),
                              asio::redirect_error(asio::use_awaitable, ec));
  }
  disarm();
  if (!ec && probe_reply_ok(probe, nonce, reply)) {
    co_return ProbeOutcome::answered;
  }
  close();
  if (timed_out_) {
    co_return ProbeOutcome::silent;
  }
  if (ec == asio::error::eof || ec == asio::error::connection_reset ||
      ec == asio::error::broken_pipe) {
    co_return ProbeOutcome::closed;
  }
  if (ec) {
    co_return io_error(ec);
  }
  co_return make_error(ErrorCode::protocol,
                       fmt::format("store: {}:{} answered the {} probe with bytes no TCPStore "
                                   "sends; is it a TCPStore server?",
                                   options_.host, options_.port, describe(probe)));
}

asio::awaitable<Result<void>> Client::detect(std::chrono::milliseconds budget) {
  const auto timeout = std::min(budget, options_.probe_timeout);
  std::string closed_by;  // the probes the server closed, for the message
  Probe probe = Probe::validate_ping;
  for (;;) {
    auto outcome = co_await run_probe(probe, timeout);
    if (!outcome) {
      co_return outcome.error();
    }
    const ProbeVerdict verdict = judge_probe(probe, *outcome);
    if (verdict.dialect) {
      options_.dialect = *verdict.dialect;
      options_.detect_dialect = false;
      if (!verdict.reuse) {
        close();
      }
      co_return Result<void>{};
    }
    if (!verdict.next) {
      break;
    }
    closed_by += fmt::format("{}{}", closed_by.empty() ? "" : ", ", describe(probe));
    probe = *verdict.next;
  }
  co_return make_error(
      ErrorCode::protocol,
      fmt::format("store: {}:{} did not answer the {} probe within {} ms{}; is it a TCPStore "
                  "server? (forcing a dialect skips the detection)",
                  options_.host, options_.port, describe(probe), timeout.count(),
                  closed_by.empty() ? "" : fmt::format(" (it closed {})", closed_by)));
}

}  // namespace ddprun::store
