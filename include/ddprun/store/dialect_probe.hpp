#pragma once
// Finding a TCPStore server's dialect from the client side (spec §6.3), as a pure decision
// table: the client sends a probe on a fresh connection, classifies what came back, and
// judge_probe() names the dialect or the next probe. Against ddprun's server and PyTorch 2.5+
// the first probe settles it on one connection; PyTorch 1.x needs three.
//
//   probe            answered        closed (EOF/reset)             silent (probe timeout)
//   validate_ping    D2 (reuse)      cancel_wait                    error: not a TCPStore?
//   cancel_wait      D1 (reuse)      num_keys                       D2 (libuv before PING)
//   num_keys         D0 (reuse)      D2 (classic before PING)       error
//
// A ≤2.1 server reads `00 CE F7 85 3C 0D <nonce>` as a legacy SET whose key length is over
// 2^62 bytes and resets: the nonce's third byte (the length's top byte) is forced to 0x40, so
// that length can never be allocated. CANCEL_WAIT (legacy opcode 11) exists only in 2.1, and
// answers 01 even when nothing is pending; 1.x resets on it. GETNUMKEYS (legacy 6) is harmless
// everywhere.

#include "ddprun/store/protocol.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ddprun::store {

enum class Probe : std::uint8_t { validate_ping, cancel_wait, num_keys };
enum class ProbeOutcome : std::uint8_t { answered, closed, silent };

struct ProbeVerdict {
  std::optional<Dialect> dialect;  ///< found; otherwise `next` is set, or neither (no answer)
  std::optional<Probe> next;
  bool reuse = false;  ///< the probe's connection can carry requests in `dialect`
};

ProbeVerdict judge_probe(Probe probe, ProbeOutcome outcome);
/// The probe's bytes; `nonce` is the PING's (its third byte is forced to 0x40).
std::string probe_request(Probe probe, std::uint32_t nonce);
/// How many reply bytes answer the probe.
std::size_t probe_reply_size(Probe probe);
/// True when `reply` (probe_reply_size bytes) is the answer the probe's dialect gives.
bool probe_reply_ok(Probe probe, std::uint32_t nonce, std::string_view reply);
/// "VALIDATE+PING (D2)", "CANCEL_WAIT (D1)", "GETNUMKEYS (D0)": for messages.
std::string_view describe(Probe probe);

}  // namespace ddprun::store
