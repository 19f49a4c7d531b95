// Every backend the flag accepts leads to exactly one builder (backends.hpp's k_builders), so
// a row added to config/backends.cpp without its builder fails here, not in a user's launch.

#include "ddprun/config/backends.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "backends.hpp"

namespace ddprun::backend {
namespace {

TEST(BackendBuilders, EveryBackendRowHasExactlyOneBuilder) {
  for (const auto& row : config::backend_rows()) {
    const auto n = std::count_if(std::begin(k_builders), std::end(k_builders),
                                 [&](const BuilderRow& b) { return b.backend == row.backend; });
    EXPECT_EQ(n, 1) << row.name;
  }
  EXPECT_EQ(std::size(k_builders), config::backend_rows().size()) << "a builder without a row";
}

}  // namespace
}  // namespace ddprun::backend
