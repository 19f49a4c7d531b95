// libFuzzer entry point for the Slurm hostlist expander and the per-node count parser:
// any input must give hosts or a one-line error, never a crash, a hang or unbounded memory.
// The caps are small (names 256, prefix expansions 64, range 128 hosts; production uses
// 1,000,000 / 65,536 / 65,536), so that every cap error is reachable within tests/fuzz/
// hostlist_fuzz.options's max_len (257 plain names take 514 bytes) and an input costs
// microseconds instead of building up to a million names. A list that expands under the small
// caps must expand to the same hosts under the production caps.

#include "ddprun/sched/hostlist.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

constexpr ddprun::sched::HostlistLimits k_fuzz_limits{
    .max_range_hosts = 128, .max_prefix_expansions = 64, .max_names = 256};

template <typename T>
void check_one_line(const ddprun::Result<T>& r) {
  if (!r && r.error().message.find_first_of("\r\n") != std::string::npos) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ddprun::sched;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto hosts = expand_hostlist(text, k_fuzz_limits);
  check_one_line(hosts);
  if (hosts) {
    auto same = expand_hostlist(text);
    if (hosts->size() > k_fuzz_limits.max_names || !same || *same != *hosts) {
      std::abort();
    }
  }
  auto counts = expand_per_node_counts(text, k_fuzz_limits);
  check_one_line(counts);
  if (counts && counts->size() > k_fuzz_limits.max_names) {
    std::abort();
  }
  return 0;
}
