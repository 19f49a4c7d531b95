#pragma once
// etcd member addresses as users write them: "h1:2379,https://h2,[::1]:2379".

#include "ddprun/util/result.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::etcd {

inline constexpr std::uint16_t k_default_port = 2379;

/// One member's client URL, already split.
struct Endpoint {
  std::string host;  // a name or an address, IPv6 without its brackets
  std::uint16_t port = k_default_port;
  bool tls = false;  // https://, or no scheme while the caller's default is TLS
  bool operator==(const Endpoint&) const = default;
};

/// Parses a comma-separated list; each entry is [http://|https://]host[:port][/]. Entries
/// without a scheme use TLS when `default_tls`. Errors are one line naming the bad entry.
Result<std::vector<Endpoint>> parse_endpoints(std::string_view text, bool default_tls = false);

/// "https://h:2379", the form error messages and logs use.
std::string to_string(const Endpoint& e);
/// Every member in that form, comma-separated: "http://a:2379,http://b:2379".
std::string to_string(const std::vector<Endpoint>& members);
/// The Host header value: "h:2379", "[::1]:2379".
std::string host_header(const Endpoint& e);

}  // namespace ddprun::etcd
