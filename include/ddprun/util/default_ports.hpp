#pragma once
// torchrun's default ports, for the modules that fall back to them.

namespace ddprun::util {

/// The c10d rendezvous store's port when --rdzv-endpoint names none (torchrun's default).
inline constexpr int k_default_c10d_port = 29400;
/// torchrun's --master-port: the static rendezvous' store (MASTER_PORT).
inline constexpr int k_default_master_port = 29500;

}  // namespace ddprun::util
