// SHA-256 and HMAC-SHA256 through OpenSSL's EVP interface. Failures of these calls mean an
// allocation failed or libcrypto is broken: both are invariant violations, so they abort.

#include "ddprun/util/crypto.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdlib>

namespace ddprun::util {
namespace {

void check(int ok) {
  if (ok != 1) {
    std::abort();  // libcrypto refused a digest of plain bytes: nothing sensible to do
  }
}

}  // namespace

struct Sha256::Ctx {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  Ctx() { check(md != nullptr ? EVP_DigestInit_ex(md, EVP_sha256(), nullptr) : 0); }
  ~Ctx() { EVP_MD_CTX_free(md); }
  Ctx(const Ctx&) = delete;
  Ctx& operator=(const Ctx&) = delete;
};

Sha256::Sha256() : ctx_(std::make_unique<Ctx>()) {}
Sha256::~Sha256() = default;

void Sha256::update(std::string_view bytes) {
  check(EVP_DigestUpdate(ctx_->md, bytes.data(), bytes.size()));
}

Digest Sha256::final() {
  Digest d{};
  unsigned int n = 0;
  check(EVP_DigestFinal_ex(ctx_->md, d.data(), &n));
  return d;
}

Digest sha256(std::string_view bytes) {
  Sha256 s;
  s.update(bytes);
  return s.final();
}

Digest hmac_sha256(std::string_view key, std::string_view message) {
  Digest d{};
  unsigned int n = 0;
  const auto* out =
      HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), d.data(), &n);
  check(out != nullptr && n == d.size() ? 1 : 0);
  return d;
}

std::string to_hex(std::string_view bytes) {
  static constexpr char k_digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(k_digits[b >> 4U]);
    out.push_back(k_digits[b & 0xfU]);
  }
  return out;
}

std::string to_hex(const Digest& digest) {
  return to_hex(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace ddprun::util
