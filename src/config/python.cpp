// default_python: which interpreter runs Python workers when --python is not given.

#include "ddprun/config/launch_config.hpp"

namespace ddprun::config {

PythonChoice default_python(const util::Env& env, std::string_view exe_dir,
                            const IsExecutable& is_executable) {
  if (auto exec = env.get_nonempty("PYTHON_EXEC")) {
    return {*exec, "env PYTHON_EXEC"};
  }
  if (!exe_dir.empty() && is_executable) {
    std::string beside(exe_dir);
    if (beside.back() != '/') {
      beside += '/';
    }
    beside += "python3";
    if (is_executable(beside)) {
      return {beside, "default (python3 beside the ddprun executable)"};
    }
  }
  return {"python3", "default (python3 on PATH)"};
}

}  // namespace ddprun::config
