// The sched module's only I/O: this host's name and PBS_NODEFILE, for detect().

#include "ddprun/sched/io.hpp"

#include "ddprun/sched/env_names.hpp"
#include "ddprun/util/files.hpp"

#include <unistd.h>

namespace ddprun::sched {

Result<std::optional<std::string>> read_pbs_nodefile(const util::Env& env) {
  auto path = env.get_nonempty(env_names::k_pbs_nodefile);
  if (!path) {
    return std::optional<std::string>();
  }
  auto text = util::read_file_or_error(*path, k_max_text_file_bytes);
  if (!text) {
    return make_error(ErrorCode::config, "PBS_NODEFILE: " + text.error().message);
  }
  return std::optional<std::string>(std::move(*text));
}

Result<Detected> detect_on_this_host(const util::Env& env, int requested_nproc) {
  HostInputs host;
  char name[256] = {};
  host.hostname = gethostname(name, sizeof name - 1) == 0 ? name : "";
  host.requested_nproc = requested_nproc;
  auto nodefile = read_pbs_nodefile(env);
  if (!nodefile) {
    return nodefile.error();
  }
  host.pbs_nodefile = std::move(*nodefile);
  return detect(env, host);
}

}  // namespace ddprun::sched
