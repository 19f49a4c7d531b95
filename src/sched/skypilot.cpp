// SkyPilot detection (`sky launch` or `sky jobs launch` of a task with num_nodes). SkyPilot runs
// the task's `run` commands once on every node and tells each copy where it stands:
// SKYPILOT_NODE_IPS (one IP per line, the head node first), SKYPILOT_NUM_NODES,
// SKYPILOT_NODE_RANK (this node's index in that list) and SKYPILOT_NUM_GPUS_PER_NODE (the
// task's accelerator count, 0 without one). SKYPILOT_TASK_ID is the same on every node of the
// task, so it is the run id and the port key; without it every node still sees the same IP list.
// The IP list is kept as given, not deduplicated: the node ranks index it.

#include "ddprun/sched/env_names.hpp"
#include "ddprun/sched/ports.hpp"
#include "ddprun/util/strings.hpp"

#include "common.hpp"

namespace ddprun::sched {

namespace {

namespace n = env_names;
using detail::config_error;
using detail::make_value;

constexpr std::string_view k_skypilot = "skypilot";
constexpr int k_max_nodes = 1'000'000;
constexpr int k_max_gpus = 1'000'000;

/// Whitespace-separated words: SkyPilot writes one IP per line, and a stray blank or a trailing
/// newline is not a node.
std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  std::string word;
  for (char c : text) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (!space) {
      word += c;
    } else if (!word.empty()) {
      out.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) {
    out.push_back(std::move(word));
  }
  return out;
}

Result<std::vector<std::string>> node_ips(const util::Env& env) {
  auto text = env.get(n::k_skypilot_node_ips);
  if (!text) {
    return config_error(k_skypilot, "SKYPILOT_NODE_RANK is set but SKYPILOT_NODE_IPS is not");
  }
  auto ips = words(*text);
  if (ips.empty()) {
    return config_error(k_skypilot, std::string(n::k_skypilot_node_ips) + "=" +
                                        util::quoted(*text) +
                                        ": expected the nodes' IPs, one per line, head first");
  }
  return ips;
}

/// "SKYPILOT_NUM_NODES='3': expected the number of IPs in SKYPILOT_NODE_IPS='a\nb' (2)".
Error count_mismatch(const util::Env& env, std::size_t ips) {
  auto var = [&](std::string_view name) {
    return std::string(name) + "=" + util::quoted(env.get(name).value_or(""));
  };
  return config_error(k_skypilot,
                      var(n::k_skypilot_num_nodes) + ": expected the number of IPs in " +
                          var(n::k_skypilot_node_ips) + " (" + std::to_string(ips) + ")");
}

/// hosts, nnodes and the head from the IP list, checked against SKYPILOT_NUM_NODES when set.
Result<void> set_nodes(Detected& d, const util::Env& env, std::vector<std::string> ips) {
  auto count = detail::int_var(env, k_skypilot, n::k_skypilot_num_nodes, 1, k_max_nodes);
  if (!count) {
    return count.error();
  }
  if (*count && static_cast<std::size_t>(**count) != ips.size()) {
    return count_mismatch(env, ips.size());
  }
  detail::set_hosts(d, std::move(ips), n::k_skypilot_node_ips);
  if (*count) {
    d.nnodes->origin = std::string(k_skypilot) + ": " + std::string(n::k_skypilot_num_nodes);
  }
  return {};
}

Result<void> set_node_rank(Detected& d, const util::Env& env) {
  const int nnodes = static_cast<int>(d.hosts.size());
  auto rank = detail::int_var(env, k_skypilot, n::k_skypilot_node_rank, 0, nnodes - 1);
  if (!rank) {
    return rank.error();
  }
  d.node_rank = make_value(k_skypilot, n::k_skypilot_node_rank, std::to_string(rank->value_or(0)));
  return {};
}

/// The run id and the port key: the task id when SkyPilot gave one, else the IP list.
void set_run_id_and_ports(Detected& d, const util::Env& env) {
  if (auto task = env.get_nonempty(n::k_skypilot_task_id)) {
    d.rdzv_id = make_value(k_skypilot, n::k_skypilot_task_id, *task);
    detail::set_ports(d, port_key_of(*task), n::k_skypilot_task_id);
    return;
  }
  std::string ips;
  for (const auto& ip : d.hosts) {
    ips += ip + "\n";
  }
  detail::set_ports(d, port_key_of(ips), n::k_skypilot_node_ips);
}

/// As under Slurm: the visible devices first, else the task's accelerator count when above 0.
Result<void> set_gpus(Detected& d, const util::Env& env) {
  auto gpus = detail::int_var(env, k_skypilot, n::k_skypilot_num_gpus_per_node, 0, k_max_gpus);
  if (!gpus) {
    return gpus.error();
  }
  detail::set_gpu_hint(d, env);
  if (!d.nproc_hint && *gpus && **gpus > 0) {
    d.nproc_hint = make_value(k_skypilot, n::k_skypilot_num_gpus_per_node, std::to_string(**gpus));
  }
  return {};
}

}  // namespace

Result<Detected> detect_skypilot(const util::Env& env) {
  Detected d;
  if (!env.get_nonempty(n::k_skypilot_node_rank)) {
    return d;
  }
  d.scheduler = std::string(k_skypilot);
  auto ips = node_ips(env);
  if (!ips) {
    return ips.error();
  }
  auto r = set_nodes(d, env, std::move(*ips));
  if (!r) {
    return r.error();
  }
  r = set_node_rank(d, env);
  if (!r) {
    return r.error();
  }
  r = set_gpus(d, env);
  if (!r) {
    return r.error();
  }
  set_run_id_and_ports(d, env);
  return d;
}

}  // namespace ddprun::sched
