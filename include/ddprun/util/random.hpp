#pragma once
// Random bytes from the kernel, for what must differ across thousands of processes started
// at once (nonces, etcd lease IDs): a generator seeded from one 32-bit value would repeat
// between them.

#include <cstddef>
#include <cstdint>
#include <string>

namespace ddprun::util {

/// `n` bytes from getrandom(2) (std::random_device where that fails).
std::string random_bytes(std::size_t n);
/// Eight of those bytes as one number.
std::uint64_t random_u64();

}  // namespace ddprun::util
