#pragma once
// Which torch the workers' interpreter imports, found on disk without running it (the agent
// never imports torch, and launching Python for this would cost tens of milliseconds): the
// interpreter's sys.path is rebuilt from its path (venv, conda, pyenv versions, Debian's
// dist-packages, PYTHONPATH, the user site) and the first torch/version.py on it is read.

#include "ddprun/util/env.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::host {

struct TorchVersion {
  int major = 0;
  int minor = 0;
  std::string where;  ///< the torch package directory, or the variable that said it
  bool operator==(const TorchVersion&) const = default;
};

/// "2.6" from `__version__ = '2.6.0+cpu'` (version.py) or "2.6.0a0"; nullopt for other text.
std::optional<TorchVersion> parse_torch_version(std::string_view text);

/// The directories the interpreter at `python` (its path as run; `real` the file it resolves
/// to, e.g. /usr/bin/python3.11) searches for packages, in sys.path order. `venv_cfg` is the
/// text of a pyvenv.cfg beside its bin/ ("" when none); `home` is $HOME.
std::vector<std::string> package_dirs(const std::string& python, const std::string& real,
                                      const std::string& venv_cfg, const util::Env& env);

/// The workers' torch: DDPRUN_WORKER_TORCH ("2.6") when set, else the first torch/version.py
/// on `python`'s package directories (a bare name is looked up on PATH); nullopt when neither
/// tells (a wrapper script such as a pyenv shim, no torch installed).
std::optional<TorchVersion> find_worker_torch(const std::string& python, const util::Env& env);

}  // namespace ddprun::host
