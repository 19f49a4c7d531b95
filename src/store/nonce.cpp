#include "nonce.hpp"

#include "ddprun/store/auth.hpp"
#include "ddprun/util/crypto.hpp"

#include <sys/random.h>

#include <random>
#include <string>

namespace ddprun::store {

std::string random_nonce_hex() {
  std::string bytes(k_auth_nonce_bytes, '\0');
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = getrandom(bytes.data() + got, bytes.size() - got, 0);
    if (n <= 0) {
      break;
    }
    got += static_cast<std::size_t>(n);
  }
  if (got < bytes.size()) {
    // getrandom(2) is missing or interrupted: the kernel's entropy through random_device.
    std::random_device rd;
    for (std::size_t i = got; i < bytes.size(); ++i) {
      bytes[i] = static_cast<char>(rd() & 0xffU);
    }
  }
  return util::to_hex(bytes);
}

}  // namespace ddprun::store
