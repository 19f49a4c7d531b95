// ddprun's own options, plus --use-env from the legacy torch.distributed.launch parser.
// None reads PET_: they are not torchrun's. --log-level and --shutdown-timeout fall back on the
// environment variables torch itself reads for the same knobs.
#include "flag_groups.hpp"

namespace ddprun::cli::detail {

namespace {

std::vector<FlagSpec> command_extras() {
  using enum FlagKind;
  const auto g = FlagGroup::extras;
  return {
      {"python", {"--python"}, valued, "", "", "PATH", {}, g,
       "Interpreter for the workers; empty means $PYTHON_EXEC, else python3 on PATH."},
      {"use_env", {"--use-env", "--use_env"}, boolean, "0", "", "", {}, g,
       "Legacy torch.distributed.launch flag: accepted for symmetry; LOCAL_RANK is always set "
       "in the environment."},
      {"legacy_local_rank", {"--legacy-local-rank", "--legacy_local_rank"}, boolean, "0", "", "",
       {}, g,
       "Append --local_rank=N after the script, like torch.distributed.launch without "
       "--use-env."},
      {"local_rank_arg", {"--local-rank-arg", "--local_rank_arg"}, valued, "underscore", "",
       "STYLE", {"underscore", "dash"}, g,
       "Spelling of the legacy argument: underscore gives --local_rank=N, dash gives "
       "--local-rank=N."},
  };
}

std::vector<FlagSpec> agent_extras() {
  using enum FlagKind;
  const auto g = FlagGroup::extras;
  return {
      {"agent_store", {"--agent-store", "--agent_store"}, valued, "auto", "", "MODE",
       {"auto", "on", "off"}, g,
       "Whether the launcher hosts the workers' TCPStore: auto follows torchrun, on forces it, "
       "off means 1.13 behaviour (worker rank 0 hosts the store for c10d)."},
      {"shutdown_timeout", {"--shutdown-timeout", "--shutdown_timeout"}, valued, "30",
       "TORCH_ELASTIC_SHUTDOWN_TIMEOUT", "SECONDS", {}, g,
       "Grace period between SIGTERM and SIGKILL when stopping workers."},
      {"events_file", {"--events-file", "--events_file"}, valued, "", "", "PATH", {}, g,
       "Append the launcher's events as JSON lines to this file."},
      {"log_level", {"--log-level", "--log_level"}, valued, "WARNING", "LOGLEVEL", "LEVEL", {}, g,
       "Level of the launcher's own messages: DEBUG, INFO, WARNING, ERROR or CRITICAL."},
  };
}

std::vector<FlagSpec> info_extras() {
  using enum FlagKind;
  const auto g = FlagGroup::extras;
  return {
      {"print_config", {"--print-config", "--print_config"}, boolean, "0", "", "", {}, g,
       "Print the resolved configuration, with where each value came from, and exit."},
      {"version", {"--version"}, version, "", "", "", {}, g, "Print ddprun's version and exit."},
      {"help", {"-h", "--help"}, help, "", "", "", {}, g, "Show this help message and exit."},
  };
}

}  // namespace

std::vector<FlagSpec> ddprun_flags() {
  auto flags = command_extras();
  append(flags, agent_extras());
  append(flags, info_extras());
  return flags;
}

}  // namespace ddprun::cli::detail
