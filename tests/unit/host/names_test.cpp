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

AddrFacts facts(std::string route, bool resolves) {
  AddrFacts f;
  f.route_source = std::move(route);
  f.name = "box7";
  f.name_resolves = resolves;
  f.endpoint = "10.0.0.1:29400";
  return f;
}

TEST(HostNames, LocalAddrWinsOverEverything) {
  auto f = facts("", false);
  f.local_addr = "10.0.0.9";
  auto p = choose_published_addr(f);
  EXPECT_EQ(p.addr, "10.0.0.9");
  EXPECT_TRUE(p.info.empty());
  EXPECT_TRUE(p.error.empty());
}

TEST(HostNames, TheInterfaceTowardTheEndpointIsPublishedQuietlyWhenTheNameResolves) {
  auto p = choose_published_addr(facts("10.0.0.5", true));
  EXPECT_EQ(p.addr, "10.0.0.5");
  EXPECT_TRUE(p.info.empty()) << p.info;
}

TEST(HostNames, AnUnresolvableNameIsReplacedByTheInterfaceAddressWithAnInfoLine) {
  auto p = choose_published_addr(facts("10.0.0.5", false));
  EXPECT_EQ(p.addr, "10.0.0.5");
  EXPECT_EQ(p.info,
            "this host's name 'box7' does not resolve here; publishing 10.0.0.5, the address of "
            "the interface toward the rendezvous endpoint 10.0.0.1:29400 (--local-addr sets "
            "another)");
  EXPECT_TRUE(p.error.empty());
}

TEST(HostNames, WithoutARouteTheNameIsPublishedWhenItResolves) {
  auto p = choose_published_addr(facts("", true));
  EXPECT_EQ(p.addr, "box7");
  EXPECT_TRUE(p.error.empty());
}

TEST(HostNames, NeitherARouteNorAResolvableNameFailsNamingTheNameAndLocalAddr) {
  auto p = choose_published_addr(facts("", false));
  EXPECT_TRUE(p.addr.empty());
  EXPECT_EQ(p.error,
            "this host's name 'box7' does not resolve here and no interface reaches the "
            "rendezvous endpoint 10.0.0.1:29400: pass --local-addr with an address the other "
            "nodes reach this one at");
}

}  // namespace
}  // namespace ddprun::host
