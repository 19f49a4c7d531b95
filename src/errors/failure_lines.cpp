#include "ddprun/errors/failure_lines.hpp"

#include <algorithm>

namespace ddprun::errors {
namespace {

/// Failed ranks named in one line; the rest are counted.
constexpr std::size_t k_max_named_failures = 4;
constexpr std::string_view k_module_not_found = "ModuleNotFoundError:";
constexpr std::string_view k_import_error = "ImportError:";
constexpr std::string_view k_no_module_named = "No module named '";

std::string one_failure(const ProcessFailure& f) {
  return "rank " + std::to_string(f.rank) + " (local_rank " + std::to_string(f.local_rank) +
         ", pid " + std::to_string(f.pid) + ")";
}

std::string module_in(std::string_view line) {
  const auto at = line.find(k_no_module_named);
  if (at == std::string_view::npos) {
    return {};
  }
  const auto start = at + k_no_module_named.size();
  const auto end = line.find('\'', start);
  return end == std::string_view::npos ? std::string()
                                       : std::string(line.substr(start, end - start));
}

/// Why ddprun ran this interpreter, from --print-config's origin.
std::string why_chosen(const Interpreter& p) {
  if (p.origin.rfind("flag ", 0) == 0) {
    return "given with " + p.origin.substr(5);
  }
  if (p.origin == "env PYTHON_EXEC") {
    return "taken from PYTHON_EXEC";
  }
  if (p.origin.find("beside") != std::string::npos) {
    return "the python3 installed beside the ddprun executable, ddprun's default when neither "
           "--python nor PYTHON_EXEC is set";
  }
  if (p.origin.find("PATH") != std::string::npos) {
    return "the first python3 on PATH, ddprun's default when neither --python nor PYTHON_EXEC "
           "is set and no python3 is installed beside the ddprun executable";
  }
  return "from " + p.origin;
}

std::string named_interpreter(const Interpreter& p) {
  return p.resolved.empty() || p.resolved == p.path ? p.path : p.path + " (" + p.resolved + ")";
}

}  // namespace

std::string describe_exit(int exit_code) {
  if (exit_code >= 0) {
    return "exit code " + std::to_string(exit_code);
  }
  const auto name = signal_name(-exit_code);
  const auto number = std::to_string(-exit_code);
  return name.empty() ? "killed by signal " + number
                      : "killed by " + name + " (signal " + number + ")";
}

std::string render_failed_ranks(const std::vector<ProcessFailure>& failures,
                                std::string_view host) {
  const auto root = root_cause_index(failures);
  const auto& first = failures[root];
  std::string out =
      one_failure(first) + " on " + std::string(host) + ": " + describe_exit(first.exit_code);
  if (!first.reason.empty()) {
    out += " (" + first.reason + ")";
  }
  std::size_t named = 1;
  for (std::size_t i = 0; i < failures.size(); ++i) {
    if (i == root || named >= k_max_named_failures) {
      continue;
    }
    out += (named == 1 ? "; also " : ", ") + one_failure(failures[i]) + ": " +
           describe_exit(failures[i].exit_code);
    ++named;
  }
  if (failures.size() > named) {
    out += ", and " + std::to_string(failures.size() - named) + " more";
  }
  return out;
}

std::optional<MissingModule> find_import_error(const std::vector<std::string>& lines) {
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    const std::string_view line(*it);
    if (line.find(k_module_not_found) != std::string_view::npos ||
        line.find(k_import_error) != std::string_view::npos) {
      return MissingModule{module_in(line), std::string(line)};
    }
  }
  return std::nullopt;
}

std::vector<std::string> render_import_hint(const Interpreter& python, const MissingModule& m) {
  const std::string what = m.module.empty() ? "a module" : m.module;
  std::vector<std::string> out{"The workers' Python could not import " + what + ": they ran " +
                               named_interpreter(python) + "."};
  out.push_back("  It is " + why_chosen(python) + ".");
  std::string choose =
      "  To run another interpreter: --python /path/to/python3 or "
      "PYTHON_EXEC=/path/to/python3 (one where `import " +
      what + "` works)";
  if (!python.others.empty()) {
    choose += "; other python3 on PATH: ";
    for (std::size_t i = 0; i < python.others.size(); ++i) {
      choose += (i == 0 ? "" : ", ") + python.others[i];
    }
  }
  out.push_back(choose + ".");
  return out;
}

}  // namespace ddprun::errors
