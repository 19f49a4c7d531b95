// libFuzzer entry point for a node's answer to a job-wide stack request (errors/node_stacks.hpp):
// any bytes through decode_node_stacks. A parse gives a value or a one-line error; a parsed
// value encodes to a text that parses back to the same value; merging it with itself keeps its
// groups' ranks sorted and distinct, and the report renders.

#include "ddprun/errors/node_stacks.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ddprun::errors;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = decode_node_stacks(text);
  if (!parsed) {
    if (parsed.error().message.find_first_of("\r\n") != std::string::npos) {
      std::abort();
    }
    return 0;
  }
  auto again = decode_node_stacks(encode_node_stacks(*parsed));
  if (!again || !(*again == *parsed)) {
    std::abort();
  }
  for (const auto& g : merge_stack_groups({*parsed, *parsed})) {
    if (g.ranks.empty() || !std::is_sorted(g.ranks.begin(), g.ranks.end()) ||
        std::adjacent_find(g.ranks.begin(), g.ranks.end()) != g.ranks.end()) {
      std::abort();
    }
  }
  (void)render_stack_report(merge_stack_groups({*parsed}));
  return 0;
}
