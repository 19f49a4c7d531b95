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

}  // namespace

sched::Detected detect_scheduler(const util::Env& env, const cli::ParsedArgs& args, int cpu_count) {
  if (args.flag_on(cli::flag::k_no_auto)) {
    sched::Detected none;
    none.job = sched::detect_job(env);  // the job's token file is not a launch setting
    return none;
  }
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

}  // namespace ddprun::app
