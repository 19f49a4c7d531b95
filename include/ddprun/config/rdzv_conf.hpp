#pragma once
// The --rdzv-conf keys ddprun knows, and how it reads the option's text. torchrun passes the
// whole map to the rendezvous handler, which takes the keys it knows and ignores the rest; ddprun
// does the same but says so: every key it leaves out gets one warning line.

#include "ddprun/util/result.hpp"

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::config {

/// What ddprun does with a known key.
enum class ConfKeyUse {
  used,         ///< read by the rendezvous, the store or the static backend
  c10d_only,    ///< read under c10d, ignored (with a warning) under static
  static_only,  ///< read under static, ignored (with a warning) under c10d
  ignored,      ///< torch knows it but it changes nothing in ddprun (a warning)
};

struct ConfKey {
  std::string_view key;
  ConfKeyUse use;
  std::string_view why_ignored;  ///< said in the warning when the key is left out
};

/// Every key ddprun knows, in the order --help and docs/from-torchrun.md list them.
std::span<const ConfKey> rdzv_conf_keys();

/// --rdzv-conf after reading: the pairs ddprun uses, and one warning per pair it left out.
struct RdzvConf {
  std::map<std::string, std::string> pairs;
  std::vector<std::string> warnings;  ///< without the option's name; the caller prefixes it
};

/// Reads --rdzv-conf text for `backend` ("static" or "c10d"). One level of quotes around the
/// whole text ("'join_timeout=5,timeout=5'", a shell quote a wrapper passed on literally) is
/// removed with a warning; unknown keys and keys that do not apply are left out with a warning.
/// Malformed items (no '=', empty key or value) are errors, as in torchrun. Values of the keys
/// kept are checked later by their consumers.
Result<RdzvConf> read_rdzv_conf(std::string_view text, std::string_view backend);

}  // namespace ddprun::config
