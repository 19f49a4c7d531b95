// Endpoint lists: [scheme://]host[:port][/], comma-separated, IPv6 in brackets.

#include "ddprun/etcd/endpoints.hpp"

#include "ddprun/util/strings.hpp"

#include <fmt/format.h>

namespace ddprun::etcd {
namespace {

Error bad(std::string_view entry, std::string_view why) {
  return make_error(ErrorCode::config, fmt::format("etcd endpoint \"{}\": {}", entry, why));
}

/// Splits "host[:port]" (host possibly "[v6]") into the endpoint.
Result<Endpoint> parse_authority(std::string_view entry, std::string_view rest, bool tls) {
  Endpoint e{{}, k_default_port, tls};
  std::string_view port_text;
  if (!rest.empty() && rest.front() == '[') {
    const auto close = rest.find(']');
    if (close == std::string_view::npos) {
      return bad(entry, "unclosed '[' in the IPv6 address");
    }
    e.host = std::string(rest.substr(1, close - 1));
    const auto after = rest.substr(close + 1);
    if (!after.empty() && after.front() != ':') {
      return bad(entry, "expected ':port' after ']'");
    }
    port_text = after.empty() ? after : after.substr(1);
    if (!after.empty() && port_text.empty()) {
      return bad(entry, "empty port");
    }
  } else {
    const auto colon = rest.find(':');
    e.host = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = rest.substr(colon + 1);
      if (port_text.empty()) {
        return bad(entry, "empty port");
      }
    }
  }
  if (e.host.empty()) {
    return bad(entry, "no host");
  }
  if (!port_text.empty()) {
    auto port = util::parse_int_in(port_text, 1, 65535);
    if (!port) {
      return bad(entry, fmt::format("port \"{}\" is not a number in 1..65535", port_text));
    }
    e.port = static_cast<std::uint16_t>(*port);
  }
  return e;
}

Result<Endpoint> parse_one(std::string_view entry, bool default_tls) {
  std::string_view rest = entry;
  bool tls = default_tls;
  if (const auto sep = rest.find("://"); sep != std::string_view::npos) {
    const std::string scheme = util::to_lower(rest.substr(0, sep));
    if (scheme != "http" && scheme != "https") {
      return bad(entry, fmt::format("scheme \"{}\" is not http or https", scheme));
    }
    tls = scheme == "https";
    rest = rest.substr(sep + 3);
  }
  if (!rest.empty() && rest.back() == '/') {
    rest.remove_suffix(1);
  }
  if (rest.find('/') != std::string_view::npos) {
    return bad(entry, "a path is not allowed (the client adds /v3/...)");
  }
  return parse_authority(entry, rest, tls);
}

}  // namespace

Result<std::vector<Endpoint>> parse_endpoints(std::string_view text, bool default_tls) {
  if (util::trim(text).empty()) {
    return make_error(ErrorCode::config, "etcd endpoints: empty list");
  }
  std::vector<Endpoint> out;
  for (const std::string& raw : util::split(text, ',')) {
    const std::string_view entry = util::trim(raw);
    if (entry.empty()) {
      return make_error(ErrorCode::config,
                        fmt::format("etcd endpoints \"{}\": an empty entry", text));
    }
    auto e = parse_one(entry, default_tls);
    if (!e) {
      return e.error();
    }
    out.push_back(std::move(*e));
  }
  return out;
}

std::string host_header(const Endpoint& e) {
  const bool v6 = e.host.find(':') != std::string::npos;
  return v6 ? fmt::format("[{}]:{}", e.host, e.port) : fmt::format("{}:{}", e.host, e.port);
}

std::string to_string(const Endpoint& e) {
  return fmt::format("{}://{}", e.tls ? "https" : "http", host_header(e));
}

std::string to_string(const std::vector<Endpoint>& members) {
  std::string out;
  for (const auto& e : members) {
    out += (out.empty() ? "" : ",") + to_string(e);
  }
  return out;
}

}  // namespace ddprun::etcd
