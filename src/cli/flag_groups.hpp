#pragma once
// Module-private: the per-concern pieces of the flag table, concatenated by flag_table().

#include "ddprun/cli/flags.hpp"

#include <utility>
#include <vector>

namespace ddprun::cli::detail {

/// Nodes and workers, and the worker command (flags_launch.cpp).
std::vector<FlagSpec> launch_flags();
/// Rendezvous (flags_rdzv.cpp).
std::vector<FlagSpec> rdzv_flags();
/// Restarts and supervision, logs and output (flags_logging.cpp).
std::vector<FlagSpec> logging_flags();
/// ddprun's own options and the legacy launcher's --use-env (flags_ddprun.cpp).
std::vector<FlagSpec> ddprun_flags();

/// Moves every entry of `tail` to the end of `head`.
inline void append(std::vector<FlagSpec>& head, std::vector<FlagSpec> tail) {
  for (auto& f : tail) {
    head.push_back(std::move(f));
  }
}

}  // namespace ddprun::cli::detail
