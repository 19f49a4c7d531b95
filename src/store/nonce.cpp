#include "nonce.hpp"

#include "ddprun/store/auth.hpp"
#include "ddprun/util/crypto.hpp"
#include "ddprun/util/random.hpp"

namespace ddprun::store {

std::string random_nonce_hex() { return util::to_hex(util::random_bytes(k_auth_nonce_bytes)); }

}  // namespace ddprun::store
