#include "ddprun/host/names.hpp"

#include <gtest/gtest.h>

namespace ddprun::host {
namespace {

// Python: aliases.insert(0, hostname); the first with a dot, else hostname.
TEST(HostNames, TheFqdnIsTheFirstNameWithADotAsPythonPicksIt) {
  EXPECT_EQ(pick_fqdn("node01.cluster", {"node01"}), "node01.cluster");
  EXPECT_EQ(pick_fqdn("node01", {"node01.cluster", "n1.other"}), "node01.cluster");
  EXPECT_EQ(pick_fqdn("localhost", {}), "localhost") << "127.0.0.1's reverse name, no dot";
  EXPECT_EQ(pick_fqdn("vm", {"vm-alias"}), "vm");
}

}  // namespace
}  // namespace ddprun::host
