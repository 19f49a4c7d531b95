#include "support/subprocess.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

extern char** environ;

namespace ddprun::test {

namespace {

std::vector<std::string> child_env(const RunOptions& o) {
  std::map<std::string, std::string> vars;
  for (char** p = environ; *p != nullptr; ++p) {
    std::string e(*p);
    auto eq = e.find('=');
    if (eq != std::string::npos) {
      vars[e.substr(0, eq)] = e.substr(eq + 1);
    }
  }
  for (const auto& name : o.env_remove) {
    vars.erase(name);
  }
  if (vars.count("PET_MASTER_PORT") == 0) {
    vars["PET_MASTER_PORT"] = std::to_string(free_port());
  }
  for (const auto& [k, v] : o.env_add) {
    vars[k] = v;
  }
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [k, v] : vars) {
    out.push_back(k + "=" + v);
  }
  return out;
}

pid_t spawn(const std::vector<std::string>& argv, const RunOptions& o, int out_fd, int err_fd) {
  const auto env = child_env(o);
  auto cargv = exec_args(argv);
  auto cenv = exec_args(env);
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    if (!o.cwd.empty() && chdir(o.cwd.c_str()) != 0) {
      _exit(125);
    }
    execve(cargv[0], cargv.data(), cenv.data());
    _exit(127);
  }
  setpgid(pid, pid);
  return pid;
}

int decode(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

}  // namespace

void sleep_a_moment() { std::this_thread::sleep_for(std::chrono::milliseconds(10)); }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::map<std::string, std::string> parse_env_file(const std::string& path) {
  std::map<std::string, std::string> env;
  std::istringstream in(read_file(path));
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) {
      env[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  return env;
}

std::string make_temp_dir(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base != nullptr ? base : "/tmp") + "/" + prefix + "XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    return "";
  }
  return buf.data();
}

Background start(const std::vector<std::string>& argv, const RunOptions& options) {
  Background bg;
  auto dir = make_temp_dir("ddprun-bg-");
  bg.out_path = dir + "/out";
  bg.err_path = dir + "/err";
  int out = open(bg.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int err = open(bg.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bg.pid = spawn(argv, options, out, err);
  close(out);
  close(err);
  return bg;
}

int wait_for(pid_t pid, std::chrono::milliseconds timeout) {
  int status = 0;
  bool done = eventually([&] { return waitpid(pid, &status, WNOHANG) == pid; }, timeout);
  return done ? decode(status) : -1;
}

RunResult run(const std::vector<std::string>& argv, const RunOptions& options) {
  auto bg = start(argv, options);
  RunResult r;
  r.status = wait_for(bg.pid, options.timeout);
  if (r.status < 0) {
    r.timed_out = true;
    kill(-bg.pid, SIGKILL);
    r.status = wait_for(bg.pid, std::chrono::seconds(10));
  }
  r.out = read_file(bg.out_path);
  r.err = read_file(bg.err_path);
  std::filesystem::remove_all(std::filesystem::path(bg.out_path).parent_path());
  return r;
}

std::string ddprun_bin() {
  const char* b = std::getenv("DDPRUN_BIN");
  return b != nullptr ? b : DDPRUN_TEST_BIN;
}

std::string source_path(const std::string& relative) {
  const char* s = std::getenv("DDPRUN_SOURCE_DIR");
  return std::string(s != nullptr ? s : DDPRUN_TEST_SOURCE_DIR) + "/" + relative;
}

namespace {

bool is_zombie(const std::filesystem::path& proc_dir) {
  std::string line = read_file((proc_dir / "stat").string());
  auto close_paren = line.rfind(')');
  return close_paren == std::string::npos || line.substr(close_paren + 2, 1) == "Z";
}

}  // namespace

std::vector<pid_t> processes_with_env(const std::string& name_eq_value) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    std::string environ_text = read_file((entry.path() / "environ").string());
    std::string needle = std::string(1, '\0') + name_eq_value + std::string(1, '\0');
    if ((std::string(1, '\0') + environ_text + std::string(1, '\0')).find(needle) ==
        std::string::npos) {
      continue;
    }
    if (!is_zombie(entry.path())) {
      out.push_back(static_cast<pid_t>(std::stol(name)));
    }
  }
  return out;
}

std::string unique_tag() {
  static int counter = 0;
  return "DDPRUN_TEST_TAG=" + std::to_string(getpid()) + "-" + std::to_string(++counter);
}

/// Only an import that fails means no torch: an import still running after the bound (a loaded
/// machine: seen at over 60 s while three builds ran) counts as torch being there, so that the
/// test runs and fails on its own if torch is broken, instead of skipping silently.
bool have_torch() {
  static int cached = -1;
  if (cached < 0) {
    auto r =
        run({"/usr/bin/python3", "-c", "import torch"}, {{}, {}, "", std::chrono::seconds(120)});
    cached = r.status == 0 || r.timed_out ? 1 : 0;
  }
  return cached == 1;
}

}  // namespace ddprun::test
