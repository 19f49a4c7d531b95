#include "ddprun/config/backends.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/util/strings.hpp"

#include <algorithm>
#include <cctype>

namespace ddprun::config {

using util::quoted;

namespace {
constexpr std::string_view k_nnodes_expected = "expected N or MIN:MAX (positive integers)";
constexpr std::string_view k_endpoint_expected = "expected host[:port] with a port 0-65535";
constexpr double k_stall_default_factor = 5.0;  // NVIDIA ft_launcher's safety factor
constexpr double k_stall_max_factor = 1000.0;
constexpr std::string_view k_stall_auto = "auto";
constexpr std::string_view k_stall_auto_prefix = "auto:";
}  // namespace

bool is_host_text(std::string_view text) {
  auto host_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == ':' ||
           c == '-';
  };
  return !text.empty() && std::all_of(text.begin(), text.end(), host_char);
}

Result<NodeRange> parse_nnodes(std::string_view text) {
  auto parts = util::split(text, ':');
  if (parts.size() > 2) {
    return make_error(ErrorCode::usage, quoted(text) + ": " + std::string(k_nnodes_expected));
  }
  auto lo = util::parse_int_in(parts[0], 1, 1 << 20);
  auto hi = util::parse_int_in(parts.back(), 1, 1 << 20);
  if (!lo || !hi) {
    return make_error(ErrorCode::usage, quoted(text) + ": " + std::string(k_nnodes_expected));
  }
  if (*lo > *hi) {
    return make_error(ErrorCode::usage, quoted(text) + ": MIN must not be greater than MAX");
  }
  return NodeRange{static_cast<int>(*lo), static_cast<int>(*hi)};
}

Result<StallTimeoutText> parse_stall_timeout(std::string_view text) {
  const auto t = util::trim(text);
  if (t == k_stall_auto) {
    return StallTimeoutText{std::chrono::milliseconds(0), k_stall_default_factor};
  }
  if (util::starts_with(t, k_stall_auto_prefix)) {
    auto factor = util::parse_double(t.substr(k_stall_auto_prefix.size()));
    if (!factor || *factor < 1.0 || *factor > k_stall_max_factor) {
      return make_error(ErrorCode::usage, "stall timeout " + quoted(text) +
                                              ": FACTOR of auto:FACTOR must be 1 to 1000");
    }
    return StallTimeoutText{std::chrono::milliseconds(0), *factor};
  }
  auto seconds = util::parse_seconds(t);
  if (!seconds) {
    return seconds.error();
  }
  return StallTimeoutText{*seconds, std::nullopt};
}

Result<RdzvBackend> parse_rdzv_backend(std::string_view text) {
  if (const auto* row = find_backend(text)) {
    return row->backend;
  }
  if (text == "etcd" || text == "etcd-v2") {
    return make_error(ErrorCode::usage,
                      quoted(text) + ": expected " + backend_names() +
                          " (torchrun's etcd and etcd-v2 speak etcd's v2 API, which etcd 3.6 "
                          "removed: use --rdzv-backend etcd-v3)");
  }
  return make_error(ErrorCode::usage, quoted(text) + ": expected " + backend_names());
}

Result<std::map<std::string, std::string>> parse_rdzv_conf(std::string_view text) {
  std::map<std::string, std::string> out;
  if (util::trim(text).empty()) {
    return out;
  }
  for (const auto& item : util::split(text, ',')) {
    auto eq = item.find('=');
    auto key = util::trim(std::string_view(item).substr(0, eq));
    auto value = eq == std::string::npos ? std::string_view{}
                                         : util::trim(std::string_view(item).substr(eq + 1));
    if (key.empty() || value.empty()) {
      return make_error(ErrorCode::usage,
                        "item " + quoted(item) + ": expected key=value items (k1=v1,k2=v2)");
    }
    out[std::string(key)] = std::string(value);
  }
  return out;
}

Result<Endpoint> parse_endpoint(std::string_view text, int default_port) {
  auto t = util::trim(text);
  if (t.empty()) {
    return Endpoint{"localhost", default_port};
  }
  std::string host(t);
  std::string port_text;
  if (t.front() == '[' && t.back() == ']') {
    host = std::string(t.substr(1, t.size() - 2));
  } else if (auto colon = t.rfind(':'); colon != std::string_view::npos) {
    host = std::string(t.substr(0, colon));
    port_text = std::string(t.substr(colon + 1));
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
  }
  if (!is_host_text(host)) {
    return make_error(ErrorCode::usage, quoted(text) + ": invalid host " + quoted(host) + ", " +
                                            std::string(k_endpoint_expected));
  }
  int port = default_port;
  if (!port_text.empty() || t.back() == ':') {
    auto p = port_text.size() <= 5 ? util::parse_int_in(port_text, 0, 65535)
                                   : Result<std::int64_t>(Error{});
    if (!p || port_text.find_first_not_of("0123456789") != std::string::npos) {
      return make_error(ErrorCode::usage, quoted(text) + ": invalid port " + quoted(port_text) +
                                              ", " + std::string(k_endpoint_expected));
    }
    port = static_cast<int>(*p);
  }
  return Endpoint{host, port};
}

}  // namespace ddprun::config
