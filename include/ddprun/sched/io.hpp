#pragma once
// The reads scheduler detection needs (this host's name, PBS_NODEFILE); kept apart from the
// pure code.

#include "ddprun/sched/detect.hpp"
#include "ddprun/util/env.hpp"
#include "ddprun/util/result.hpp"

#include <cstddef>
#include <optional>
#include <string>

namespace ddprun::sched {

/// Largest nodefile read: Gadi-style one line per CPU of 1000 nodes is ~2 MB.
inline constexpr std::size_t k_max_text_file_bytes = 64 * 1024 * 1024;

/// $PBS_NODEFILE's contents; nullopt when the variable is unset or empty, ErrorCode::config
/// ("PBS_NODEFILE: open(...): ...") when the file cannot be read.
Result<std::optional<std::string>> read_pbs_nodefile(const util::Env& env);

/// The shell around detect(): gathers this host's name and the PBS nodefile, then runs it.
/// `requested_nproc` is --nproc-per-node as a number, 0 when it is not one.
Result<Detected> detect_on_this_host(const util::Env& env, int requested_nproc);

}  // namespace ddprun::sched
