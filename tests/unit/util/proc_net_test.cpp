#include "ddprun/util/proc_net.hpp"

#include <gtest/gtest.h>

using namespace ddprun::util;

namespace {

// Two listeners on 29500 (0x733C: IPv4 any, IPv4 loopback), one established connection from
// that port, a listener on another port, and a malformed line.
constexpr const char* k_tcp =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout "
    "inode\n"
    "   0: 00000000:733C 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 "
    "1061 1 0000000056d6752b 100 0 0 10 0\n"
    "   1: 0100007F:733C 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 "
    "2222 1 0000000056d6752b 100 0 0 10 0\n"
    "   2: 0100007F:733C 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 "
    "3333 1 0000000056d6752b 20 4 30 10 -1\n"
    "   3: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 "
    "4444 1 0000000056d6752b 100 0 0 10 0\n"
    "   4: garbage\n";

constexpr const char* k_tcp6 =
    "  sl  local_address                         remote_address                        st "
    "tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    "   0: 00000000000000000000000001000000:733C 00000000000000000000000000000000:0000 0A "
    "00000000:00000000 00:00000000 00000000     0        0 5555 1 0000000000000000 100 0 0 10 0";

}  // namespace

TEST(ProcNet, ListeningInodesOfAPortSkipOtherStatesPortsAndGarbage) {
  EXPECT_EQ(parse_listening_inodes(k_tcp, 29500), (std::vector<std::uint64_t>{1061, 2222}));
  EXPECT_EQ(parse_listening_inodes(k_tcp, 8080), (std::vector<std::uint64_t>{4444}));
  EXPECT_TRUE(parse_listening_inodes(k_tcp, 40000).empty());
  EXPECT_TRUE(parse_listening_inodes("", 29500).empty());
}

TEST(ProcNet, ListeningInodesReadIpv6Lines) {
  EXPECT_EQ(parse_listening_inodes(k_tcp6, 29500), (std::vector<std::uint64_t>{5555}));
}

TEST(ProcNet, SocketLinkGivesTheInode) {
  EXPECT_EQ(parse_socket_link("socket:[1061]"), std::optional<std::uint64_t>(1061));
  for (const char* other : {"pipe:[1061]", "socket:[]", "socket:[12x]", "/dev/null", "socket:["}) {
    EXPECT_FALSE(parse_socket_link(other)) << other;
  }
}
