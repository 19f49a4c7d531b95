#pragma once
// SHA-256 and HMAC-SHA256 from OpenSSL's libcrypto (EVP), used to authenticate the rendezvous
// (docs/reliability.md, Security). A separate target, ddprun_util_crypto, so that the rest of
// util stays free of any library: only what hashes links OpenSSL.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace ddprun::util {

inline constexpr std::size_t k_sha256_bytes = 32;
using Digest = std::array<std::uint8_t, k_sha256_bytes>;

/// Incremental hasher: update() any number of times, then final() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view bytes);
  Digest final();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

Digest sha256(std::string_view bytes);
Digest hmac_sha256(std::string_view key, std::string_view message);
/// Lower-case hex of any byte string.
std::string to_hex(std::string_view bytes);
std::string to_hex(const Digest& digest);
/// Equal length and equal bytes, in time that depends only on the lengths.
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace ddprun::util
