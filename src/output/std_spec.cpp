#include "ddprun/output/std_spec.hpp"

#include "ddprun/util/strings.hpp"

#include <string>

namespace ddprun::output {
namespace {

constexpr std::string_view k_value_regex = "^[0123]$";
constexpr std::string_view k_mapping_regex = "^(\\d:[0123],)*(\\d:[0123])$";
constexpr std::string_view k_filter_error =
    "--local_ranks_filter must be a comma-separated list of integers e.g. "
    "--local_ranks_filter=0,1,2";

bool is_std_digit(char c) { return c >= '0' && c <= '3'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

Std to_std(int bits) { return Std{(bits & 1) != 0, (bits & 2) != 0}; }

// One "d:v" entry of the mapping form.
bool is_entry(std::string_view e) {
  return e.size() == 3 && is_digit(e[0]) && e[1] == ':' && is_std_digit(e[2]);
}

}  // namespace

Std StdSpec::for_rank(int local_rank) const {
  if (!is_map) {
    return to_std(all_bits);
  }
  auto it = per_rank.find(local_rank);
  return it == per_rank.end() ? Std{} : to_std(it->second);
}

Result<StdSpec> parse_std_spec(std::string_view text, std::string_view flag_name) {
  StdSpec spec;
  if (text.size() == 1 && is_std_digit(text[0])) {
    spec.all_bits = text[0] - '0';
    return spec;
  }
  spec.is_map = true;
  for (const auto& entry : util::split(text, ',')) {
    if (!is_entry(entry)) {
      return make_error(ErrorCode::usage, std::string(flag_name) + ": " + util::quoted(text) +
                                              " does not match: <" + std::string(k_value_regex) +
                                              "> or <" + std::string(k_mapping_regex) +
                                              "> (e.g. 3 or 0:1,1:2)");
    }
    spec.per_rank[entry[0] - '0'] = entry[2] - '0';  // a repeated rank: the last one wins
  }
  return spec;
}

Result<std::set<int>> parse_local_ranks_filter(std::string_view text) {
  std::set<int> ranks;
  if (text.empty()) {
    return ranks;
  }
  for (const auto& item : util::split(text, ',')) {
    auto value = util::parse_int_in(item, 0, 1 << 20);
    if (!value) {
      return make_error(ErrorCode::usage,
                        std::string(k_filter_error) + " (got " + util::quoted(text) + ")");
    }
    ranks.insert(static_cast<int>(*value));
  }
  return ranks;
}

}  // namespace ddprun::output
