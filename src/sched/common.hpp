#pragma once
// Helpers shared by the per-scheduler detectors (module-private).

#include "ddprun/sched/detect.hpp"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::sched::detail {

/// A set, non-empty variable and its name.
struct Found {
  std::string name;
  std::string value;
};

/// Value{text, "<scheduler>: <variable>"}.
Value make_value(std::string_view scheduler, std::string_view origin, std::string text);
/// The first of `names` that is set and non-empty.
std::optional<Found> first_of(const util::Env& env, std::initializer_list<std::string_view> names);

/// The integer in [lo, hi] held by `var`; nullopt when unset or empty. A malformed or
/// out-of-range value is an error naming the scheduler, the variable and the range.
Result<std::optional<int>> int_var(const util::Env& env, std::string_view scheduler,
                                   std::string_view var, int lo, int hi);
/// A decimal job id (digits only).
Result<std::uint64_t> job_number(std::string_view scheduler, const Found& id);

Error config_error(std::string_view scheduler, const std::string& message);

/// "node1.cluster.org" -> "node1".
std::string_view short_name(std::string_view host);
/// Index of `hostname` in `hosts`: exact match first, then equal short names.
std::optional<std::size_t> find_host(const std::vector<std::string>& hosts,
                                     std::string_view hostname);
/// Unique entries in first-seen order.
std::vector<std::string> dedupe(const std::vector<std::string>& items);
/// "a, b, c" (at most a few names, then "...") for messages.
std::string list_for_message(const std::vector<std::string>& hosts);

/// hosts, nnodes and head host from one ordered host list.
void set_hosts(Detected& d, std::vector<std::string> hosts, std::string_view origin_var);
/// port_candidates and rdzv_port from a key (a job id or its hash).
void set_ports(Detected& d, std::uint64_t key, std::string_view origin);
/// nproc_hint from CUDA_VISIBLE_DEVICES when set; warns when it is empty.
void set_gpu_hint(Detected& d, const util::Env& env);

}  // namespace ddprun::sched::detail
