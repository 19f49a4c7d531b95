#include "auto_config.hpp"

#include "ddprun/sched/io.hpp"
#include "ddprun/util/fatal.hpp"
#include "ddprun/util/strings.hpp"

#include <spdlog/spdlog.h>

#include <unistd.h>

namespace ddprun::app {

namespace {

constexpr std::size_t k_max_nodefile_bytes = 64 * 1024 * 1024;

std::string this_hostname() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? name : "";
}

bool at_default(const cli::ParsedArgs& args, cli::FlagKey dest) {
  return args.at(dest).origin == cli::Origin::default_value;
}

void fill(cli::ParsedArgs& args, cli::FlagKey dest, const std::optional<sched::Value>& v) {
  if (v && at_default(args, dest)) {
    args.settings[dest] = cli::Setting{v->text, cli::Origin::scheduler, v->origin};
  }
}

}  // namespace

sched::Detected detect_scheduler(const util::Env& env, const cli::ParsedArgs& args, int cpu_count) {
  sched::HostInputs host;
  host.hostname = this_hostname();
  host.cpu_count = cpu_count;
  if (auto n = util::parse_int(args.at(cli::flag::k_nproc_per_node).value)) {
    host.requested_nproc = static_cast<int>(*n);
  }
  if (auto nodefile = env.get_nonempty("PBS_NODEFILE")) {
    auto text = sched::read_text_file(*nodefile, k_max_nodefile_bytes);
    if (!text) {
      throw Fatal(make_error(ErrorCode::config, "PBS_NODEFILE: " + text.error().message));
    }
    host.pbs_nodefile = *text;
  }
  auto detected = value_or_throw(sched::detect(env, host));
  for (const auto& w : detected.warnings) {
    spdlog::warn("{}", w);
  }
  return detected;
}

void apply_scheduler(cli::ParsedArgs& args, const sched::Detected& d) {
  if (!d.is_present()) {
    return;
  }
  fill(args, cli::flag::k_nnodes, d.nnodes);
  auto nodes = d.nnodes ? util::parse_int(d.nnodes->text) : Result<std::int64_t>(1);
  bool multi = nodes && *nodes > 1;
  if (!multi) {
    return;
  }
  fill(args, cli::flag::k_rdzv_id, d.rdzv_id);
  if (args.at(cli::flag::k_rdzv_backend).value == "c10d") {
    if (d.rdzv_endpoint_host && d.rdzv_port && at_default(args, cli::flag::k_rdzv_endpoint)) {
      args.settings[cli::flag::k_rdzv_endpoint] =
          cli::Setting{d.rdzv_endpoint_host->text + ":" + d.rdzv_port->text, cli::Origin::scheduler,
                       d.rdzv_endpoint_host->origin};
    }
    return;
  }
  fill(args, cli::flag::k_master_addr, d.rdzv_endpoint_host);
  fill(args, cli::flag::k_master_port, d.rdzv_port);
  fill(args, cli::flag::k_node_rank, d.node_rank);
}

std::vector<int> derived_ports(const cli::ParsedArgs& args, const sched::Detected& detected) {
  const auto dest = args.at(cli::flag::k_rdzv_backend).value == "c10d" ? cli::flag::k_rdzv_endpoint
                                                                       : cli::flag::k_master_port;
  if (args.at(dest).origin != cli::Origin::scheduler) {
    return {};
  }
  return detected.port_candidates;
}

}  // namespace ddprun::app
