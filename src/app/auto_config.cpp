#include "auto_config.hpp"

#include "ddprun/fanout/plan.hpp"
#include "ddprun/sched/io.hpp"
#include "ddprun/util/fatal.hpp"
#include "ddprun/util/strings.hpp"

#include <spdlog/spdlog.h>

namespace ddprun::app {

sched::Detected detect_scheduler(const util::Env& env, const cli::ParsedArgs& args) {
  if (args.flag_on(cli::flag::k_no_auto)) {
    sched::Detected none;
    none.job = sched::detect_job(env);  // the job's token file is not a launch setting
    return none;
  }
  int requested_nproc = 0;
  if (auto n = util::parse_int(args.at(cli::flag::k_nproc_per_node).value)) {
    requested_nproc = static_cast<int>(*n);
  }
  auto detected = value_or_throw(sched::detect_on_this_host(env, requested_nproc));
  for (const auto& w : detected.warnings) {
    spdlog::warn("{}", w);
  }
  // A launch that fans out is the whole job's: resolve() then sees the job's node count and
  // head host even in a Slurm batch script. An unusable --launcher is fan_out_if_needed's to
  // report, after resolve()'s own errors.
  auto via = fanout::fan_out_via(args, detected, env);
  if (via && *via) {
    return fanout::whole_job_view(std::move(detected));
  }
  return detected;
}

}  // namespace ddprun::app
