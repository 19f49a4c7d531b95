// SHA-256 after FIPS 180-4 §6.2 (message schedule, 64 rounds, big-endian length padding) and
// HMAC after RFC 2104 (keys longer than the block are hashed first).

#include "ddprun/util/sha256.hpp"

namespace ddprun::util {
namespace {

constexpr std::size_t k_block_bytes = 64;
constexpr std::size_t k_length_bytes = 8;
constexpr std::uint8_t k_ipad = 0x36;
constexpr std::uint8_t k_opad = 0x5c;

constexpr std::array<std::uint32_t, 64> k_round = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::array<std::uint32_t, 8> k_initial = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

constexpr std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

std::uint32_t load_be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

std::string_view as_chars(const Digest& d) {
  return {reinterpret_cast<const char*>(d.data()), d.size()};
}

}  // namespace

Sha256::Sha256() : h_(k_initial) {}

void Sha256::compress(const std::uint8_t* block) {
  std::array<std::uint32_t, 64> w{};
  for (std::size_t i = 0; i < 16; ++i) {
    w[i] = load_be32(block + 4 * i);
  }
  for (std::size_t i = 16; i < 64; ++i) {
    const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  auto [a, b, c, d, e, f, g, h] = h_;
  for (std::size_t i = 0; i < 64; ++i) {
    const std::uint32_t t1 =
        h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k_round[i] + w[i];
    const std::uint32_t t2 =
        (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  const std::array<std::uint32_t, 8> add = {a, b, c, d, e, f, g, h};
  for (std::size_t i = 0; i < 8; ++i) {
    h_[i] += add[i];
  }
}

void Sha256::update(std::string_view bytes) {
  total_bytes_ += bytes.size();
  for (char ch : bytes) {
    block_[used_++] = static_cast<std::uint8_t>(ch);
    if (used_ == k_block_bytes) {
      compress(block_.data());
      used_ = 0;
    }
  }
}

Digest Sha256::final() {
  const std::uint64_t bits = total_bytes_ * 8;
  block_[used_++] = 0x80;
  if (used_ > k_block_bytes - k_length_bytes) {
    while (used_ < k_block_bytes) {
      block_[used_++] = 0;
    }
    compress(block_.data());
    used_ = 0;
  }
  while (used_ < k_block_bytes - k_length_bytes) {
    block_[used_++] = 0;
  }
  for (int i = 7; i >= 0; --i) {
    block_[used_++] = static_cast<std::uint8_t>(bits >> (8 * i));
  }
  compress(block_.data());
  Digest out{};
  for (std::size_t i = 0; i < 8; ++i) {
    for (std::size_t j = 0; j < 4; ++j) {
      out[4 * i + j] = static_cast<std::uint8_t>(h_[i] >> (24 - 8 * j));
    }
  }
  return out;
}

Digest sha256(std::string_view bytes) {
  Sha256 s;
  s.update(bytes);
  return s.final();
}

Digest hmac_sha256(std::string_view key, std::string_view message) {
  std::array<std::uint8_t, k_block_bytes> k{};
  if (key.size() > k_block_bytes) {
    const Digest hashed = sha256(key);
    std::copy(hashed.begin(), hashed.end(), k.begin());
  } else {
    for (std::size_t i = 0; i < key.size(); ++i) {
      k[i] = static_cast<std::uint8_t>(key[i]);
    }
  }
  std::string ipad(k_block_bytes, '\0');
  std::string opad(k_block_bytes, '\0');
  for (std::size_t i = 0; i < k_block_bytes; ++i) {
    ipad[i] = static_cast<char>(k[i] ^ k_ipad);
    opad[i] = static_cast<char>(k[i] ^ k_opad);
  }
  Sha256 inner;
  inner.update(ipad);
  inner.update(message);
  const Digest inner_digest = inner.final();
  Sha256 outer;
  outer.update(opad);
  outer.update(as_chars(inner_digest));
  return outer.final();
}

std::string to_hex(std::string_view bytes) {
  static constexpr char k_digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char ch : bytes) {
    const auto b = static_cast<std::uint8_t>(ch);
    out.push_back(k_digits[b >> 4]);
    out.push_back(k_digits[b & 0xf]);
  }
  return out;
}

std::string to_hex(const Digest& digest) { return to_hex(as_chars(digest)); }

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  unsigned diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff |=
        static_cast<unsigned>(static_cast<std::uint8_t>(a[i]) ^ static_cast<std::uint8_t>(b[i]));
  }
  return diff == 0;
}

}  // namespace ddprun::util
