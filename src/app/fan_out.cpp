#include "fan_out.hpp"

#include "ddprun/fanout/plan.hpp"
#include "ddprun/fanout/run.hpp"
#include "ddprun/host/facts.hpp"
#include "ddprun/sched/io.hpp"
#include "ddprun/util/fatal.hpp"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <climits>

namespace ddprun::app {

namespace {

std::string self_exe() {
  auto path = host::self_exe_path();
  if (path.empty()) {
    throw Fatal(make_error(ErrorCode::io, "readlink(/proc/self/exe) failed: cannot fan out"));
  }
  return path;
}

std::string current_dir() {
  std::string dir(PATH_MAX, '\0');
  if (getcwd(dir.data(), dir.size()) == nullptr) {
    throw Fatal(make_error(ErrorCode::io, "getcwd failed: cannot fan out"));
  }
  dir.resize(dir.find('\0'));
  return dir;
}

std::string nodefile_of(const util::Env& env) {
  auto text = sched::read_pbs_nodefile(env);
  return text && *text ? **text : "";
}

std::string render_argv(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& word : argv) {
    line += " " + fanout::shell_quote(word);
  }
  return line;
}

}  // namespace

std::optional<int> fan_out_if_needed(const std::vector<std::string>& args,
                                     const cli::ParsedArgs& parsed, const sched::Detected& detected,
                                     const util::Env& env, const config::LaunchConfig& cfg) {
  const std::string& launcher = parsed.at(cli::flag::k_launcher).value;
  if (launcher == "none" || (launcher == "auto" && detected.hosts.size() < 2)) {
    return std::nullopt;
  }
  fanout::PlanInputs in{args, self_exe(), current_dir(), nodefile_of(env)};
  auto plan = value_or_throw(fanout::make_plan(cfg, parsed, detected, env, in));
  if (!plan) {
    return std::nullopt;
  }
  spdlog::info("fan-out: starting ddprun on {} node(s) through {} (head {})", plan->nodes.size(),
               fanout::to_string(plan->via), plan->nodes.front().host);
  for (const auto& node : plan->nodes) {
    spdlog::debug("fan-out: node {} ({}):{}", node.node_rank, node.host, render_argv(node.argv));
  }
  return fanout::run_plan(*plan, env,
                          {cfg.supervision.shutdown_timeout, cfg.supervision.signals_to_handle});
}

}  // namespace ddprun::app
