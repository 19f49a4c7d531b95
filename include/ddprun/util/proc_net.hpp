#pragma once
// Who holds a TCP port on this machine, read from Linux's /proc: the parsing is pure here, the
// reading of /proc is the caller's (app/port_holder).

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace ddprun::util {

/// The socket inodes listening on `port` in the text of /proc/net/tcp or /proc/net/tcp6
/// (state 0A); malformed lines are skipped.
std::vector<std::uint64_t> parse_listening_inodes(std::string_view proc_net_tcp, int port);

/// The inode of an fd link target "socket:[12345]"; nullopt for anything else.
std::optional<std::uint64_t> parse_socket_link(std::string_view link);

}  // namespace ddprun::util
