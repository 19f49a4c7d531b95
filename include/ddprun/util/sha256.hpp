#pragma once
// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), small and dependency-free so the relocatable
// binary needs no OpenSSL. Used to authenticate the rendezvous (docs/reliability.md, Security).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ddprun::util {

inline constexpr std::size_t k_sha256_bytes = 32;
using Digest = std::array<std::uint8_t, k_sha256_bytes>;

/// Incremental hasher: update() any number of times, then final() once.
class Sha256 {
 public:
  Sha256();
  void update(std::string_view bytes);
  Digest final();

 private:
  void compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> h_{};
  std::array<std::uint8_t, 64> block_{};
  std::size_t used_ = 0;
  std::uint64_t total_bytes_ = 0;
};

Digest sha256(std::string_view bytes);
Digest hmac_sha256(std::string_view key, std::string_view message);
/// Lower-case hex of any byte string.
std::string to_hex(std::string_view bytes);
std::string to_hex(const Digest& digest);
/// Equal length and equal bytes, in time that depends only on the lengths.
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace ddprun::util
