#include "ddprun/errors/oom.hpp"

#include "ddprun/util/files.hpp"
#include "ddprun/util/strings.hpp"

#include <algorithm>
#include <csignal>

namespace ddprun::errors {
namespace {

constexpr std::string_view k_cgroup_root = "/sys/fs/cgroup";
constexpr std::string_view k_vmstat = "/proc/vmstat";
constexpr std::string_view k_self_cgroup = "/proc/self/cgroup";

bool names_memory(std::string_view controllers) {
  for (const auto& c : util::split(controllers, ',')) {
    if (c == "memory") {
      return true;
    }
  }
  return false;
}

bool rose(const std::optional<std::uint64_t>& before, const std::optional<std::uint64_t>& after) {
  return before && after && *after > *before;
}

}  // namespace

std::optional<std::uint64_t> parse_oom_kill_count(std::string_view text) {
  for (const auto& line : util::split(text, '\n')) {
    auto fields = util::split(util::trim(line), ' ');
    if (fields.size() == 2 && fields[0] == "oom_kill") {
      auto value = util::parse_int(fields[1]);
      if (value && *value >= 0) {
        return static_cast<std::uint64_t>(*value);
      }
    }
  }
  return std::nullopt;
}

std::vector<std::string> memory_cgroup_files(std::string_view proc_self_cgroup) {
  std::vector<std::string> files;
  for (const auto& line : util::split(proc_self_cgroup, '\n')) {
    auto first = line.find(':');
    auto second = line.find(':', first == std::string::npos ? first : first + 1);
    if (first == std::string::npos || second == std::string::npos) {
      continue;
    }
    auto controllers = std::string_view(line).substr(first + 1, second - first - 1);
    auto path = line.substr(second + 1);
    if (path == "/") {
      path.clear();
    }
    // Inside a container the mount is often the container's own cgroup while the path
    // names it from the host, so the mount root is the fallback candidate.
    if (line.substr(0, first) == "0" && controllers.empty()) {
      files.push_back(std::string(k_cgroup_root) + path + "/memory.events");
      files.push_back(std::string(k_cgroup_root) + "/memory.events");
    } else if (names_memory(controllers)) {
      files.push_back(std::string(k_cgroup_root) + "/memory" + path + "/memory.oom_control");
      files.push_back(std::string(k_cgroup_root) + "/memory/memory.oom_control");
    }
  }
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

bool oom_suspected(int exit_code, const OomCounters& before, const OomCounters& after) {
  if (exit_code != -SIGKILL) {
    return false;
  }
  return rose(before.cgroup, after.cgroup) || rose(before.system, after.system);
}

OomCounters read_oom_counters() {
  OomCounters counters;
  if (auto vmstat = util::read_file(std::string(k_vmstat))) {
    counters.system = parse_oom_kill_count(*vmstat);
  }
  auto self = util::read_file(std::string(k_self_cgroup));
  if (!self) {
    return counters;
  }
  for (const auto& file : memory_cgroup_files(*self)) {
    if (auto text = util::read_file(file)) {
      counters.cgroup = parse_oom_kill_count(*text);
      if (counters.cgroup) {
        break;
      }
    }
  }
  return counters;
}

}  // namespace ddprun::errors
