// config::resolve's topology part (resolver.hpp): --segment and the node's domain and topology
// path, which decide group ranks (rdzv/rank_order.hpp). The static backend's ranks are
// --node-rank, so it takes neither.

#include "ddprun/config/backends.hpp"

#include <algorithm>

#include "resolver.hpp"

namespace ddprun::config::detail {
namespace {

constexpr std::size_t k_max_domain_chars = 128;

bool is_domain_text(const std::string& text) {
  return !text.empty() && text.size() <= k_max_domain_chars &&
         std::all_of(text.begin(), text.end(), [](char c) { return c > ' ' && c < '\x7f'; });
}

}  // namespace

Result<void> Resolver::topology() {
  auto segment = int_in(flag::k_segment, 0, 1 << 20, "a node count (0: no segments)");
  if (!segment) {
    return segment.error();
  }
  const bool is_static = row_of(cfg_.rdzv.rdzv_backend).fixed_nodes;
  if (*segment > 0 && is_static) {
    return bad(flag::k_segment,
               "no segment with the static backend, whose node ranks are --node-rank (use "
               "--rdzv-backend c10d or etcd-v3)");
  }
  const auto& nnodes = cfg_.rdzv.nnodes;
  if (*segment > 0 && (nnodes.min % *segment != 0 || nnodes.max % *segment != 0)) {
    return bad(flag::k_segment, "a size that divides --nnodes " + text(flag::k_nnodes) +
                                    ": its MIN and MAX must be whole numbers of segments");
  }
  cfg_.rdzv.rdzv_settings.segment = *segment;
  note(flag::k_segment, text(flag::k_segment));
  if (is_static) {
    return {};
  }
  if (detected_.topology) {
    cfg_.rdzv.topology = detected_.topology->text;
    note("topology", cfg_.rdzv.topology, detected_.topology->origin);
  }
  return node_domain();
}

// First found: --rdzv-conf node_domain, DDPRUN_NODE_DOMAIN, the GPUs' NVLink fabric, Slurm's
// block; else the node is alone.
Result<void> Resolver::node_domain() {
  std::string origin;
  std::string domain;
  if (auto it = cfg_.rdzv.rdzv_conf.find("node_domain"); it != cfg_.rdzv.rdzv_conf.end()) {
    domain = it->second;
    origin = "--rdzv-conf node_domain";
  } else if (auto v = env_.get(k_node_domain_env)) {
    domain = *v;
    origin = std::string(k_node_domain_env);
  }
  if (!origin.empty() && !is_domain_text(domain)) {
    return make_error(ErrorCode::usage, origin + " " + quoted(domain) +
                                            ": expected a domain name of 1-128 printable "
                                            "characters without spaces");
  }
  if (origin.empty() && host_.fabric_domain) {
    domain = *host_.fabric_domain;
    origin = host_.fabric_detail;
  } else if (origin.empty() && detected_.block) {
    domain = detected_.block->text;
    origin = detected_.block->origin;
  } else if (origin.empty()) {
    origin = "none: the node alone" +
             (host_.fabric_detail.empty() ? "" : " (" + host_.fabric_detail + ")");
  }
  cfg_.rdzv.domain = domain;
  cfg_.rdzv.domain_origin = origin;
  note("node_domain", domain.empty() ? "-" : domain, origin);
  return {};
}

}  // namespace ddprun::config::detail
