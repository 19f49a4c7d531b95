#include "ddprun/config/torchrun_flavor.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace ddprun::config {
namespace {

// What each torchrun gives its workers where they differ (captures in tests/e2e/torchrun_env/).
TEST(TorchrunFlavor, EachTorchGetsWhatItsTorchrunGives) {
  struct Row {
    std::optional<TorchRelease> torch;
    TorchrunFlavor flavor;
  };
  const std::vector<Row> rows{
      {TorchRelease{1, 13}, {NcclNames::legacy, false, false}},
      {TorchRelease{2, 1}, {NcclNames::legacy, false, false}},
      {TorchRelease{2, 2}, {NcclNames::current, false, false}},
      {TorchRelease{2, 4}, {NcclNames::current, true, false}},
      {TorchRelease{2, 6}, {NcclNames::current, true, false}},
      {TorchRelease{2, 9}, {NcclNames::current, true, true}},
      {TorchRelease{2, 14}, {NcclNames::current, true, true}},
      {TorchRelease{3, 0}, {NcclNames::current, true, true}},
      {std::nullopt, {NcclNames::both, true, true}},
  };
  for (const auto& row : rows) {
    EXPECT_EQ(torchrun_flavor(row.torch), row.flavor)
        << (row.torch ? std::to_string(row.torch->major) + "." + std::to_string(row.torch->minor)
                      : "unknown");
  }
}

TEST(TorchrunFlavor, TheInfoLineNamesWhatTheWorkersGet) {
  EXPECT_EQ(render_flavor(torchrun_flavor(TorchRelease{1, 13})),
            "NCCL_ASYNC_ERROR_HANDLING, worker rank 0's store for a one-node c10d job");
  EXPECT_EQ(render_flavor(torchrun_flavor(TorchRelease{2, 14})),
            "TORCH_NCCL_ASYNC_ERROR_HANDLING, the agent's store for a one-node job, "
            "TORCHELASTIC_SIGNALS_TO_HANDLE");
}

}  // namespace
}  // namespace ddprun::config
