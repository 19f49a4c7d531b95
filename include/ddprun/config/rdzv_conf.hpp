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

/// The backends that read a known key, as a mask; under any other backend the key is left out
/// with a warning. 0: torch knows the key but it changes nothing in ddprun.
using BackendMask = unsigned;
inline constexpr BackendMask k_read_by_static = 1U;
inline constexpr BackendMask k_read_by_c10d = 2U;
inline constexpr BackendMask k_read_by_etcd_v3 = 4U;
inline constexpr BackendMask k_read_by_all = 7U;

struct ConfKey {
  std::string_view key;
  BackendMask read_by;
  std::string_view why_ignored;  ///< said in the warning when the key is left out
};

/// Every key ddprun knows, in the order --help and docs/from-torchrun.md list them.
std::span<const ConfKey> rdzv_conf_keys();

/// --rdzv-conf after reading: the pairs ddprun uses, and one warning per pair it left out.
struct RdzvConf {
  std::map<std::string, std::string> pairs;
  std::vector<std::string> warnings;  ///< without the option's name; the caller prefixes it
};

/// Reads --rdzv-conf text for `backend` ("static", "c10d" or "etcd-v3"; another name is an
/// error, never a reason to drop every key: backends.hpp). One level of quotes around
/// the whole text ("'join_timeout=5,timeout=5'", a shell quote a wrapper passed on literally) is
/// removed with a warning; unknown keys and keys that do not apply are left out with a warning.
/// Malformed items (no '=', empty key or value) are errors, as in torchrun. Values of the keys
/// kept are checked later by their consumers.
Result<RdzvConf> read_rdzv_conf(std::string_view text, std::string_view backend);

}  // namespace ddprun::config
