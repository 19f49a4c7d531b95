// libFuzzer entry point for the Slurm hostlist expander and the per-node count parser:
// any input must give hosts or a one-line error, never a crash, a hang or unbounded memory.

#include "ddprun/sched/hostlist.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto hosts = ddprun::sched::expand_hostlist(text);
  if (hosts && hosts->size() > ddprun::sched::k_max_hostlist_names) {
    std::abort();
  }
  if (!hosts && hosts.error().message.find('\n') != std::string::npos) {
    std::abort();
  }
  (void)ddprun::sched::expand_per_node_counts(text);
  return 0;
}
