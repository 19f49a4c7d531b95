#include "ddprun/util/proc_net.hpp"

#include <charconv>
#include <string>

namespace ddprun::util {
namespace {

constexpr std::string_view k_listen_state = "0A";
constexpr std::size_t k_local_field = 1;
constexpr std::size_t k_state_field = 3;
constexpr std::size_t k_inode_field = 9;

std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) {
      ++i;
    }
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') {
      ++i;
    }
    if (i > start) {
      out.push_back(line.substr(start, i - start));
    }
  }
  return out;
}

template <typename T>
std::optional<T> parse_number(std::string_view text, int base) {
  T value{};
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value, base);
  if (ec != std::errc() || ptr != end || text.empty()) {
    return std::nullopt;
  }
  return value;
}

/// The listening socket's inode when `line` is one on `port`.
std::optional<std::uint64_t> listening_inode(std::string_view line, int port) {
  const auto f = fields_of(line);
  if (f.size() <= k_inode_field || f[k_state_field] != k_listen_state) {
    return std::nullopt;
  }
  const auto colon = f[k_local_field].rfind(':');
  if (colon == std::string_view::npos) {
    return std::nullopt;
  }
  const auto local_port = parse_number<int>(f[k_local_field].substr(colon + 1), 16);
  if (!local_port || *local_port != port) {
    return std::nullopt;
  }
  return parse_number<std::uint64_t>(f[k_inode_field], 10);
}

}  // namespace

std::vector<std::uint64_t> parse_listening_inodes(std::string_view proc_net_tcp, int port) {
  std::vector<std::uint64_t> out;
  std::size_t start = 0;
  while (start < proc_net_tcp.size()) {
    auto end = proc_net_tcp.find('\n', start);
    if (end == std::string_view::npos) {
      end = proc_net_tcp.size();
    }
    if (auto inode = listening_inode(proc_net_tcp.substr(start, end - start), port)) {
      out.push_back(*inode);
    }
    start = end + 1;
  }
  return out;
}

std::optional<std::uint64_t> parse_socket_link(std::string_view link) {
  constexpr std::string_view prefix = "socket:[";
  if (link.size() <= prefix.size() + 1 || link.substr(0, prefix.size()) != prefix ||
      link.back() != ']') {
    return std::nullopt;
  }
  return parse_number<std::uint64_t>(link.substr(prefix.size(), link.size() - prefix.size() - 1),
                                     10);
}

}  // namespace ddprun::util
