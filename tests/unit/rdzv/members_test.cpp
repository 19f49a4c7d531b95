#include "ddprun/rdzv/members.hpp"

#include <gtest/gtest.h>

#include <map>

#include "fixtures.hpp"

namespace ddprun::rdzv {
namespace {

std::vector<NodeDesc> nodes(std::size_t n) {
  std::vector<NodeDesc> out;
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(test::node("10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250),
                             static_cast<std::int64_t>(i)));
  }
  return out;
}

/// Reads a list back through MembersReader from `store`, counting the requests.
std::vector<NodeDesc> read_back(const std::map<std::string, std::string>& store, int& requests) {
  MembersReader reader("job", 4);
  requests = 0;
  for (;;) {
    std::vector<std::string> texts;
    for (const auto& key : reader.next_keys()) {
      const auto it = store.find(key);
      texts.push_back(it == store.end() ? std::string() : it->second);
    }
    ++requests;
    auto whole = reader.take(texts);
    EXPECT_TRUE(whole) << whole.error().message;
    if (!whole || *whole) {
      return reader.take_list();
    }
  }
}

TEST(RdzvMembers, AListOfAnySizeIsWrittenInPartsAndReadBackWhole) {
  const std::pair<std::size_t, std::size_t> sizes_and_parts[] = {
      {0, 1}, {3, 1}, {999, 1}, {1000, 2}, {1001, 2}, {4000, 5}, {12'345, 13}};
  for (const auto& [size, parts] : sizes_and_parts) {
    const auto list = nodes(size);
    const auto written = member_parts("job", 4, list);
    ASSERT_EQ(written.size(), parts) << size << " nodes";
    std::map<std::string, std::string> store(written.begin(), written.end());
    for (const auto& [key, value] : written) {
      EXPECT_LT(value.size(), 200'000U) << key;
    }
    int requests = 0;
    EXPECT_EQ(read_back(store, requests), list) << size << " nodes";
    EXPECT_EQ(static_cast<std::size_t>(requests), parts / k_member_parts_per_request + 1)
        << size << " nodes";
  }
  EXPECT_EQ(member_parts("job", 4, nodes(1)).front().first, "ddprun/rdzv/job/4/members/0");
}

TEST(RdzvMembers, AListNeverWrittenReadsAsNoNodes) {
  int requests = 0;
  EXPECT_TRUE(read_back({}, requests).empty());
  EXPECT_EQ(requests, 1);
}

TEST(RdzvMembers, APartThatIsNotAListIsAnErrorNamingIt) {
  MembersReader reader("job", 4);
  auto r = reader.take({encode_members(nodes(1000)), "[oops"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("(part 1 of round 4)"), std::string::npos) << r.error().message;
}

TEST(RdzvMembers, AListThatNeverEndsStopsAtAMillionNodes) {
  MembersReader reader("job", 4);
  const std::string full = encode_members(nodes(1000));
  const std::vector<std::string> texts(k_member_parts_per_request, full);
  Result<bool> r = false;
  int requests = 0;
  while (r && !*r && requests < 1000) {
    r = reader.take(texts);
    ++requests;
  }
  ASSERT_FALSE(r);
  EXPECT_EQ(static_cast<std::size_t>(requests),
            (1000 + k_member_parts_per_request - 1) / k_member_parts_per_request);
  EXPECT_NE(r.error().message.find("more than 1000 parts"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace ddprun::rdzv
