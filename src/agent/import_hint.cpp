#include "ddprun/agent/import_hint.hpp"

#include "ddprun/util/strings.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

extern char** environ;  // NOLINT: POSIX declares it nowhere in C++

namespace ddprun::agent {
namespace {

constexpr std::chrono::milliseconds k_probe_bound{3000};
constexpr std::chrono::milliseconds k_probe_poll{10};
constexpr int k_module_missing = 3;
constexpr const char* k_find_spec =
    "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec(sys.argv[1]) else 3)";

std::optional<errors::MissingModule> import_error_in(const errors::ProcessFailure& f) {
  auto lines = f.stderr_tail;
  for (const auto& line : util::split(f.message, '\n')) {
    lines.push_back(line);
  }
  return errors::find_import_error(lines);
}

/// Exit status of `pid` within `bound`; nullopt (after killing it) when it took longer.
std::optional<int> wait_bounded(pid_t pid, std::chrono::milliseconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return std::nullopt;
    }
    std::this_thread::sleep_for(k_probe_poll);
  }
  return WIFEXITED(status) ? std::optional<int>(WEXITSTATUS(status)) : std::nullopt;
}

}  // namespace

errors::Interpreter describe_interpreter(const config::WorkerCommand& cfg, const util::Env& env) {
  errors::Interpreter p{cfg.python, cfg.python_origin, "", {}};
  const auto path_var = env.get("PATH").value_or("");
  const auto found = util::executables_on_path("python3", path_var);
  if (cfg.python.find('/') == std::string::npos) {
    const auto mine = util::executables_on_path(cfg.python, path_var);
    p.resolved = mine.empty() ? std::string() : mine.front();
  }
  for (const auto& f : found) {
    if (f != p.resolved && f != p.path) {
      p.others.push_back(f);
    }
  }
  return p;
}

std::optional<bool> finds_module(const std::string& python, const std::string& module,
                                 std::chrono::milliseconds bound) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  }
  std::vector<std::string> argv{python, "-c", k_find_spec, module};
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (auto& a : argv) {
    args.push_back(a.data());
  }
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, python.c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return std::nullopt;
  }
  const auto code = wait_bounded(pid, bound);
  if (!code || (*code != 0 && *code != k_module_missing)) {
    return std::nullopt;
  }
  return *code == 0;
}

std::vector<std::string> import_hint(const config::WorkerCommand& cfg, const util::Env& env,
                                     const EarlyFailure& attempt) {
  if (cfg.no_python && !cfg.run_path) {
    return {};
  }
  std::optional<errors::MissingModule> missing;
  for (const auto& f : attempt.failures) {
    missing = missing ? missing : import_error_in(f);
  }
  const auto& root = attempt.failures[errors::root_cause_index(attempt.failures)];
  const bool early = attempt.lived < k_early_failure && root.exit_code == 1 &&
                     root.record_json.empty() && root.stderr_tail.empty();
  if (!missing && early && finds_module(cfg.python, "torch", k_probe_bound) == false) {
    missing = errors::MissingModule{"torch", ""};
  }
  return missing ? errors::render_import_hint(describe_interpreter(cfg, env), *missing)
                 : std::vector<std::string>{};
}

}  // namespace ddprun::agent
