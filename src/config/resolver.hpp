#pragma once
// config::resolve's worker (resolve.cpp), shared by the files that resolve its parts:
// resolve.cpp (nodes, placement, the worker command, supervision, health checks, logs) and
// resolve_rdzv.cpp (the rendezvous: backend, endpoint, --rdzv-conf, static node flags, the
// rendezvous and crash-loop settings), resolve_topology.cpp (--segment, the node's domain).
// Internal to the config module.

#include "ddprun/cli/flags.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/util/strings.hpp"

#include <chrono>
#include <limits>
#include <string>
#include <string_view>

namespace ddprun::config::detail {

using cli::FlagKey;
using util::quoted;
namespace flag = cli::flag;

inline constexpr std::string_view k_no_share_env = "TORCH_DISABLE_SHARE_RDZV_TCP_STORE";
inline constexpr std::string_view k_node_domain_env = "DDPRUN_NODE_DOMAIN";
inline constexpr std::chrono::milliseconds k_static_join_timeout{900000};  // torchrun's static
inline constexpr int k_int_min = std::numeric_limits<int>::min();
inline constexpr int k_int_max = std::numeric_limits<int>::max();

/// Whether `value` is one of the flag table's choices for `dest`.
bool is_choice(FlagKey dest, std::string_view value);
/// The flag table's choices for `dest` as a message lists them: "spawn, fork or forkserver".
std::string choices_text(FlagKey dest);

class Resolver {
 public:
  Resolver(const cli::ParsedArgs& args, const util::Env& env, const HostFacts& host,
           const sched::Detected& detected)
      : args_(args), env_(env), host_(host), detected_(detected) {}

  Result<LaunchConfig> run();

 private:
  const cli::Setting& at(FlagKey dest) const { return args_.at(dest); }
  const std::string& text(FlagKey dest) const { return at(dest).value; }
  bool on(FlagKey dest) const { return args_.flag_on(dest); }

  std::string origin_of(FlagKey dest) const {
    const auto& s = at(dest);
    switch (s.origin) {
      case cli::Origin::flag:
        return "flag " + s.source;
      case cli::Origin::env:
        return "env " + s.source;
      case cli::Origin::scheduler:
        return s.source;
      case cli::Origin::default_value:
        break;
    }
    return "default";
  }
  void note(const std::string& name, const std::string& value, const std::string& origin) {
    cfg_.items.push_back({name, value, origin});
  }
  void note(FlagKey dest, const std::string& value, const std::string& origin) {
    note(std::string(dest.name()), value, origin);
  }
  void note(FlagKey dest, const std::string& value) { note(dest, value, origin_of(dest)); }
  /// The flag or variable a setting's text came from: "--nnodes", "PET_NNODES", "slurm: ...".
  std::string who(FlagKey dest) const {
    const auto& s = at(dest);
    return s.origin == cli::Origin::env || s.origin == cli::Origin::scheduler
               ? s.source
               : "--" + dest_dash(std::string(dest.name()));
  }
  Error bad(FlagKey dest, const std::string& expected) const {
    return make_error(ErrorCode::usage,
                      who(dest) + " " + quoted(text(dest)) + ": expected " + expected);
  }
  void warn(FlagKey dest, const std::string& line) {
    cfg_.warnings.push_back(who(dest) + " " + line);
  }
  /// A parser's error (which quotes the text) prefixed with where the text came from.
  Error named(FlagKey dest, const Error& e) const {
    return make_error(ErrorCode::usage, who(dest) + " " + e.message);
  }
  static std::string dest_dash(std::string dest) {
    for (auto& c : dest) {
      c = c == '_' ? '-' : c;
    }
    return dest;
  }
  Result<int> int_in(FlagKey dest, int lo, int hi, const std::string& expected) {
    auto v = util::parse_int_in(text(dest), lo, hi);
    if (!v) {
      return bad(dest, expected);
    }
    return static_cast<int>(*v);
  }

  Result<void> nodes_and_workers();
  Result<void> placement();
  Result<void> rendezvous();
  Result<void> worker_command();
  Result<void> supervision();
  Result<void> stall_watch();
  Result<std::chrono::milliseconds> positive_seconds(FlagKey dest);
  Result<void> agent_store();
  Result<void> health_checks();
  Result<std::chrono::milliseconds> seconds_at_least(FlagKey dest, std::chrono::milliseconds lo,
                                                     const std::string& expected);
  Result<void> logging();
  Result<void> worker_output();
  Result<void> static_node();
  Result<void> store_endpoint(const std::string& endpoint_text, const std::string& forced);
  Result<void> etcd_endpoints(const std::string& endpoint_text);
  Result<void> local_addr();
  Result<void> rdzv_settings();
  Result<void> crash_loop();
  Result<void> topology();
  Result<void> node_domain();
  Result<void> check_is_host() const;
  void warn_if_set(FlagKey dest, bool matters, const std::string& why);

  const cli::ParsedArgs& args_;
  const util::Env& env_;
  const HostFacts& host_;
  const sched::Detected& detected_;
  LaunchConfig cfg_;
};

}  // namespace ddprun::config::detail
