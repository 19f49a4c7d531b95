#pragma once
// Env: an ordered snapshot of environment variables. Pure code takes an Env, never getenv().

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::util {

class Env {
 public:
  Env() = default;
  Env(std::initializer_list<std::pair<const std::string, std::string>> init) : vars_(init) {}

  /// Snapshot of a NULL-terminated `environ`-style array ("NAME=value" entries).
  static Env from_environ(char** envp);

  std::optional<std::string> get(std::string_view name) const;
  /// The value when set and non-empty, else nullopt (the PET_ rule: empty means unset).
  std::optional<std::string> get_nonempty(std::string_view name) const;
  bool has(std::string_view name) const { return vars_.count(std::string(name)) != 0; }
  void set(std::string name, std::string value) { vars_[std::move(name)] = std::move(value); }
  void unset(std::string_view name) { vars_.erase(std::string(name)); }

  /// "NAME=value" strings sorted by name, ready for execve.
  std::vector<std::string> to_strings() const;
  const std::map<std::string, std::string>& vars() const { return vars_; }

 private:
  std::map<std::string, std::string> vars_;
};

/// Every executable file NAME in PATH_VAR's directories (an empty entry is "."), in PATH order,
/// each real file once (a symlink to one already found is left out). NAME holds no '/'.
std::vector<std::string> executables_on_path(std::string_view name, std::string_view path_var);

}  // namespace ddprun::util
