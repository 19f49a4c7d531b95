// The sched module's only I/O: this host's name and PBS_NODEFILE, for detect().

#include "ddprun/sched/io.hpp"

#include "ddprun/sched/env_names.hpp"
#include "ddprun/util/strings.hpp"

#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <system_error>

namespace ddprun::sched {

Result<std::string> read_text_file(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return make_error(ErrorCode::io,
                      "open(" + util::quoted(path) + "): " + std::generic_category().message(err));
  }
  std::string text;
  char buffer[4096];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) {
      return make_error(ErrorCode::io, "read(" + util::quoted(path) + "): larger than " +
                                           std::to_string(max_bytes) + " bytes");
    }
  }
  if (in.bad()) {
    return make_error(ErrorCode::io, "read(" + util::quoted(path) + "): I/O error");
  }
  return text;
}

Result<std::optional<std::string>> read_pbs_nodefile(const util::Env& env) {
  auto path = env.get_nonempty(env_names::k_pbs_nodefile);
  if (!path) {
    return std::optional<std::string>();
  }
  auto text = read_text_file(*path);
  if (!text) {
    return make_error(ErrorCode::config, "PBS_NODEFILE: " + text.error().message);
  }
  return std::optional<std::string>(std::move(*text));
}

Result<Detected> detect_on_this_host(const util::Env& env, int requested_nproc, int cpu_count) {
  HostInputs host;
  char name[256] = {};
  host.hostname = gethostname(name, sizeof name - 1) == 0 ? name : "";
  host.cpu_count = cpu_count;
  host.requested_nproc = requested_nproc;
  auto nodefile = read_pbs_nodefile(env);
  if (!nodefile) {
    return nodefile.error();
  }
  host.pbs_nodefile = std::move(*nodefile);
  return detect(env, host);
}

}  // namespace ddprun::sched
