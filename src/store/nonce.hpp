#pragma once
// Module-private: random nonces for the rendezvous handshake (server and client).

#include <string>

namespace ddprun::store {

/// k_auth_nonce_bytes from getrandom(2), as lower-case hex.
std::string random_nonce_hex();

}  // namespace ddprun::store
