#pragma once
// Shared pieces of the status unit tests.

#include "ddprun/rdzv/state.hpp"

#include <cstdint>
#include <string>

namespace ddprun::status::test {

inline rdzv::NodeDesc node(const std::string& addr, std::int64_t pid, int nproc) {
  rdzv::NodeDesc n;
  n.addr = addr;
  n.pid = pid;
  n.nproc = nproc;
  return n;
}

}  // namespace ddprun::status::test
