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

}  // namespace ddprun::util
