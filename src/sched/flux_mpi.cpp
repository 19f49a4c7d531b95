// Flux and MPI runtimes (spec/schedulers.md §3). None of them puts a host list in the
// environment, so they give node count and index only when one ddprun task runs per node
// (there, the task rank is the node rank), and the rendezvous endpoint must come from
// --rdzv-endpoint. Flux job ids are F58 text ("ƒ2WZ9aKXxDb"); the "ƒ" becomes "f" in the run id.

#include "ddprun/sched/env_names.hpp"
#include "ddprun/sched/ports.hpp"
#include "ddprun/util/strings.hpp"

#include <cctype>

#include "common.hpp"

namespace ddprun::sched {

namespace {

namespace n = env_names;
using detail::make_value;

constexpr int k_max_tasks = 10'000'000;

/// The names of the variables one runtime uses for these three facts.
struct RankVars {
  std::string_view size;
  std::string_view rank;
  std::string_view local_size;  ///< empty when the runtime has none
};

/// Job ids as run ids: "ƒ" -> "f", any other byte outside [A-Za-z0-9._-] -> "_".
std::string sanitized_id(std::string_view id) {
  std::string out;
  for (std::size_t i = 0; i < id.size(); ++i) {
    const auto c = static_cast<unsigned char>(id[i]);
    if (c == 0xC6 && i + 1 < id.size() && static_cast<unsigned char>(id[i + 1]) == 0x92) {
      out += 'f';
      ++i;
    } else {
      const bool keep = std::isalnum(c) != 0 || c == '.' || c == '_' || c == '-';
      out += keep ? static_cast<char>(c) : '_';
    }
  }
  return out;
}

void warn_no_endpoint(Detected& d, int nnodes) {
  if (nnodes > 1) {
    d.warnings.push_back(d.scheduler +
                         ": the environment names no head host; pass --rdzv-endpoint");
  }
}

/// nnodes/node_rank/tasks_on_node from size, rank and the tasks per node.
Result<void> set_ranks(Detected& d, const util::Env& env, const RankVars& v, int tasks_here,
                       const std::string& tasks_origin) {
  auto size = detail::int_var(env, d.scheduler, v.size, 1, k_max_tasks);
  auto rank = size && *size ? detail::int_var(env, d.scheduler, v.rank, 0, **size - 1)
                            : Result<std::optional<int>>(std::optional<int>{});
  if (!size) {
    return size.error();
  }
  if (!rank) {
    return rank.error();
  }
  if (tasks_here > 0) {
    d.tasks_on_node = make_value(d.scheduler, tasks_origin, std::to_string(tasks_here));
  }
  if (tasks_here == 1 && *size && *rank) {
    d.nnodes = make_value(d.scheduler, std::string(v.size) + " (one task per node)",
                          std::to_string(**size));
    d.node_rank = make_value(d.scheduler, std::string(v.rank) + " (one task per node)",
                             std::to_string(**rank));
    warn_no_endpoint(d, **size);
  }
  return {};
}

Result<void> set_mpi_ranks(Detected& d, const util::Env& env, const RankVars& v) {
  auto local = detail::int_var(env, d.scheduler, v.local_size, 1, k_max_tasks);
  if (!local) {
    return local.error();
  }
  return set_ranks(d, env, v, local->value_or(0), std::string(v.local_size));
}

}  // namespace

Result<Detected> detect_flux(const util::Env& env) {
  Detected d;
  auto job = detail::first_of(env, {n::k_flux_job_id});
  if (!job) {
    return d;
  }
  d.scheduler = "flux";
  d.rdzv_id = make_value(d.scheduler, n::k_flux_job_id, sanitized_id(job->value));
  detail::set_ports(d, port_key_of(d.rdzv_id->text), n::k_flux_job_id);
  auto nodes = detail::int_var(env, d.scheduler, n::k_flux_job_nnodes, 1, k_max_tasks);
  auto size = detail::int_var(env, d.scheduler, n::k_flux_job_size, 1, k_max_tasks);
  if (!nodes || !size) {
    return nodes ? size.error() : nodes.error();
  }
  detail::set_gpu_hint(d, env);
  if (!*nodes || !*size) {
    return d;
  }
  // Flux has no per-node task count; an even spread is the common case (-N n -n n*k).
  const int per_node = (**size + **nodes - 1) / **nodes;
  auto r = set_ranks(d, env, {n::k_flux_job_size, n::k_flux_task_rank, {}}, per_node,
                     "FLUX_JOB_SIZE / FLUX_JOB_NNODES");
  if (!r) {
    return r.error();
  }
  return d;
}

Result<Detected> detect_mpi(const util::Env& env) {
  Detected d;
  RankVars vars;
  if (env.get_nonempty(n::k_ompi_size)) {
    d.scheduler = "openmpi";
    vars = {n::k_ompi_size, n::k_ompi_rank, n::k_ompi_local_size};
    if (auto ns = env.get_nonempty(n::k_pmix_namespace)) {
      d.rdzv_id = make_value(d.scheduler, n::k_pmix_namespace, sanitized_id(*ns));
      detail::set_ports(d, port_key_of(d.rdzv_id->text), n::k_pmix_namespace);
    }
  } else if (env.get_nonempty(n::k_pmi_rank) && env.get_nonempty(n::k_pmi_size)) {
    d.scheduler = "mpich";
    vars = {n::k_pmi_size, n::k_pmi_rank, n::k_mpi_localnranks};
  } else {
    return d;
  }
  auto r = set_mpi_ranks(d, env, vars);
  if (!r) {
    return r.error();
  }
  detail::set_gpu_hint(d, env);
  return d;
}

}  // namespace ddprun::sched
