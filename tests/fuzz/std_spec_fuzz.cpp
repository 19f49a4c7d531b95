// libFuzzer entry point for torchrun's -r/--redirects and -t/--tee values and
// --local-ranks-filter: any input gives a value or a one-line error; a parsed value re-renders
// to text that parses to the same per-rank streams (and the same filter).

#include "ddprun/output/std_spec.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

constexpr int k_max_bits = 3;
constexpr int k_max_single_digit_rank = 9;
constexpr int k_ranks_checked = 12;  // past the single-digit ranks a map can name

template <typename T>
void check_one_line(const ddprun::Result<T>& r) {
  if (!r && r.error().message.find_first_of("\r\n") != std::string::npos) {
    std::abort();
  }
}

std::string render_spec(const ddprun::output::StdSpec& spec) {
  if (!spec.is_map) {
    return std::to_string(spec.all_bits);
  }
  std::string out;
  for (const auto& [rank, bits] : spec.per_rank) {
    out += (out.empty() ? "" : ",") + std::to_string(rank) + ":" + std::to_string(bits);
  }
  return out;
}

void check_spec(std::string_view text) {
  auto spec = ddprun::output::parse_std_spec(text, "--redirects");
  check_one_line(spec);
  if (!spec) {
    return;
  }
  if (spec->all_bits < 0 || spec->all_bits > k_max_bits) {
    std::abort();
  }
  for (const auto& [rank, bits] : spec->per_rank) {
    if (rank < 0 || rank > k_max_single_digit_rank || bits < 0 || bits > k_max_bits) {
      std::abort();
    }
  }
  auto again = ddprun::output::parse_std_spec(render_spec(*spec), "--tee");
  if (!again) {
    std::abort();
  }
  for (int rank = 0; rank < k_ranks_checked; ++rank) {
    if (!(again->for_rank(rank) == spec->for_rank(rank))) {
      std::abort();
    }
  }
}

void check_filter(std::string_view text) {
  auto filter = ddprun::output::parse_local_ranks_filter(text);
  check_one_line(filter);
  if (!filter) {
    return;
  }
  std::string rendered;
  for (int rank : *filter) {
    if (rank < 0) {
      std::abort();
    }
    rendered += (rendered.empty() ? "" : ",") + std::to_string(rank);
  }
  auto again = ddprun::output::parse_local_ranks_filter(rendered);
  if (!again || *again != *filter) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_spec(text);
  check_filter(text);
  return 0;
}
