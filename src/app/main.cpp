#include "ddprun/app/main.hpp"

#include "ddprun/backend/agent_died.hpp"
#include "ddprun/process/guardian_notice.hpp"
#include "ddprun/status/command.hpp"
#include "ddprun/store/command.hpp"
#include "ddprun/util/exit_status.hpp"
#include "ddprun/util/fatal.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "launch.hpp"

namespace ddprun::app {

namespace {

int exit_code_for(const Error& e) {
  return e.code == ErrorCode::usage || e.code == ErrorCode::config ? util::k_exit_usage
                                                                   : util::k_exit_failure;
}

}  // namespace

int main(int argc, char** argv, char** envp) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const auto env = util::Env::from_environ(envp);
  if (!args.empty() && args[0] == "store") {
    return store::store_command(args, env);
  }
  if (!args.empty() && args[0] == "status") {
    return status::status_command(args, env);
  }
  if (!args.empty() && args[0] == process::k_agent_died_command) {
    return backend::agent_died_command(args);  // hidden: run by a killed agent's guardian
  }
  try {
    return launch(args, env);
  } catch (const Fatal& f) {
    (void)std::fprintf(stderr, "ddprun: error: %s\n", f.what());
    return exit_code_for(f.error());
  } catch (const std::exception& e) {
    (void)std::fprintf(stderr, "ddprun: internal error: %s\n", e.what());
    return util::k_exit_failure;
  }
}

}  // namespace ddprun::app
