#pragma once
// torchrun's -r/--redirects and -t/--tee values and --local-ranks-filter
// (spec torchrun.md §1.2, §7.1). Pure parsers.

#include "ddprun/util/result.hpp"

#include <map>
#include <set>
#include <string_view>

namespace ddprun::output {

/// Which standard streams a setting applies to (torchrun's Std bits: 1 out, 2 err, 3 both).
struct Std {
  bool out = false;
  bool err = false;
  friend bool operator==(const Std&, const Std&) = default;
};

/// A parsed -r/-t value: one value for every local rank, or a per-rank map where ranks
/// not named get 0 (torchrun's to_map).
struct StdSpec {
  int all_bits = 0;
  std::map<int, int> per_rank;  ///< used when is_map
  bool is_map = false;

  Std for_rank(int local_rank) const;
};

/// "3" or "0:1,1:2" (single-digit local ranks, values 0-3, as torchrun's regexes allow).
/// The error names the flag, the value and both accepted forms.
Result<StdSpec> parse_std_spec(std::string_view text, std::string_view flag_name);

/// "0,1,2" -> {0,1,2}; "" -> {} (no filter). Error text is torchrun's.
Result<std::set<int>> parse_local_ranks_filter(std::string_view text);

}  // namespace ddprun::output
