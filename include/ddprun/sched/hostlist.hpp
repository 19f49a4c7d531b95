#pragma once
// Slurm hostlist expressions ("gpu-[01-04,07],login[1-2]") expanded to host names, following
// src/common/hostlist.c for one-dimensional clusters (see spec/schedulers.md §1.3).

#include "ddprun/util/result.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::sched {

/// Widest single bracket range, as Slurm's MAX_RANGE (64 Ki hosts).
inline constexpr std::size_t k_max_range_hosts = 64 * 1024;
/// Most expansions of the prefix of one bracket group, as Slurm's MAX_PREFIX_CNT.
inline constexpr std::size_t k_max_prefix_expansions = 64 * 1024;
/// Cap on the names one expression may produce in total.
inline constexpr std::size_t k_max_hostlist_names = 1'000'000;
/// Longest number (in characters, zero padding included) inside brackets.
inline constexpr std::size_t k_max_range_digits = 18;

/// The caps of one expansion. Production uses the defaults (Slurm's); smaller ones let a fuzzer
/// reach every cap error without building a million names per input.
struct HostlistLimits {
  std::size_t max_range_hosts = k_max_range_hosts;
  std::size_t max_prefix_expansions = k_max_prefix_expansions;
  std::size_t max_names = k_max_hostlist_names;
};

/// Expands a hostlist in input order, duplicates kept, nothing sorted.
/// Grammar: tokens separated by ',', ' ', '\t' or '\n' (runs collapse; commas inside brackets do
/// not split). A token is a plain name or `prefix[ranges]suffix`, where `ranges` is
/// `num` or `lo-hi` items joined by commas; the prefix may hold earlier bracket groups (expanded
/// as outer loops, varying slowest). Zero padding width = the length of the low bound as written.
/// "" gives an empty list. Errors (ErrorCode::config) name the whole text and the fault:
/// unbalanced brackets, lo > hi, non-digits, a range over max_range_hosts, more than
/// max_prefix_expansions names before a bracket group, more than max_names names.
Result<std::vector<std::string>> expand_hostlist(std::string_view text,
                                                 const HostlistLimits& limits = {});

/// Slurm's "2(x3),1" tasks/CPUs-per-node form expanded to one count per node ([2, 2, 2, 1]);
/// at most limits.max_names counts.
Result<std::vector<int>> expand_per_node_counts(std::string_view text,
                                                const HostlistLimits& limits = {});

}  // namespace ddprun::sched
