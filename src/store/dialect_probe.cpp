// The client's dialect detection table (dialect_probe.hpp, spec §6.3).

#include "ddprun/store/dialect_probe.hpp"

namespace ddprun::store {
namespace {

/// The nonce's third byte is the top byte of the key length a legacy server reads: >= 2^62.
constexpr std::uint32_t k_nonce_length_top = 0x00400000;
constexpr std::uint32_t k_nonce_free_bits = 0xFF00FFFF;
constexpr std::size_t k_u32_bytes = 4;
constexpr std::size_t k_u64_bytes = 8;

std::uint32_t wire_nonce(std::uint32_t nonce) {
  return (nonce & k_nonce_free_bits) | k_nonce_length_top;
}

}  // namespace

ProbeVerdict judge_probe(Probe probe, ProbeOutcome outcome) {
  if (outcome == ProbeOutcome::answered) {
    const Dialect found = probe == Probe::validate_ping ? Dialect::d2
                          : probe == Probe::cancel_wait ? Dialect::d1
                                                        : Dialect::d0;
    return ProbeVerdict{found, std::nullopt, true};
  }
  switch (probe) {
    case Probe::validate_ping:
      return outcome == ProbeOutcome::closed ? ProbeVerdict{std::nullopt, Probe::cancel_wait, false}
                                             : ProbeVerdict{};
    case Probe::cancel_wait:
      return outcome == ProbeOutcome::closed ? ProbeVerdict{std::nullopt, Probe::num_keys, false}
                                             : ProbeVerdict{Dialect::d2, std::nullopt, false};
    case Probe::num_keys:
      return outcome == ProbeOutcome::closed ? ProbeVerdict{Dialect::d2, std::nullopt, false}
                                             : ProbeVerdict{};
  }
  return ProbeVerdict{};
}

std::string probe_request(Probe probe, std::uint32_t nonce) {
  switch (probe) {
    case Probe::validate_ping: {
      std::string bytes = encode_validate();
      Request ping{Op::ping};
      ping.word = wire_nonce(nonce);
      bytes += *encode_request(Dialect::d2, ping);
      return bytes;
    }
    case Probe::cancel_wait:
      return *encode_request(Dialect::d1, Request{Op::cancel_wait});
    case Probe::num_keys:
      return *encode_request(Dialect::d0, Request{Op::get_num_keys});
  }
  return {};
}

std::size_t probe_reply_size(Probe probe) {
  switch (probe) {
    case Probe::validate_ping:
      return k_u32_bytes;
    case Probe::cancel_wait:
      return 1;
    case Probe::num_keys:
      return k_u64_bytes;
  }
  return 0;
}

bool probe_reply_ok(Probe probe, std::uint32_t nonce, std::string_view reply) {
  if (reply.size() != probe_reply_size(probe)) {
    return false;
  }
  switch (probe) {
    case Probe::validate_ping:
      return get_u32(reply) == wire_nonce(nonce);
    case Probe::cancel_wait:
      return static_cast<std::uint8_t>(reply[0]) == reply::k_wait_canceled;
    case Probe::num_keys:
      return static_cast<std::int64_t>(get_u64(reply)) >= 0;
  }
  return false;
}

std::string_view describe(Probe probe) {
  switch (probe) {
    case Probe::validate_ping:
      return "VALIDATE+PING (D2)";
    case Probe::cancel_wait:
      return "CANCEL_WAIT (D1)";
    case Probe::num_keys:
      return "GETNUMKEYS (D0)";
  }
  return "?";
}

}  // namespace ddprun::store
