#include "ddprun/output/log_paths.hpp"

namespace ddprun::output {

std::string temp_root(const util::Env& env) { return env.get_nonempty("TMPDIR").value_or("/tmp"); }

std::string attempt_dir(std::string_view run_dir, int attempt) {
  return std::string(run_dir) + "/attempt_" + std::to_string(attempt);
}

LogPaths log_paths(std::string_view run_dir, int attempt, int local_rank) {
  if (run_dir.empty()) {
    return {};
  }
  LogPaths p;
  p.dir = attempt_dir(run_dir, attempt) + "/" + std::to_string(local_rank);
  p.stdout_log = p.dir + "/stdout.log";
  p.stderr_log = p.dir + "/stderr.log";
  p.error_file = p.dir + "/error.json";
  return p;
}

}  // namespace ddprun::output
