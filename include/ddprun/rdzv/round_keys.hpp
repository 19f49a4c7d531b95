#pragma once
// Two exchanges of a formed round under its prefix, besides joining: where the workers' store
// is (MASTER_ADDR/MASTER_PORT, from group rank 0) and the exit barrier (a count of members
// done). The executor calls them for its current round.

#include "ddprun/net/asio.hpp"
#include "ddprun/rdzv/round_store.hpp"
#include "ddprun/rdzv/settings.hpp"

#include <chrono>
#include <optional>

namespace ddprun::rdzv {

/// Group rank 0 publishes `mine` under the round's prefix; every node (rank 0 included)
/// reads it back, waiting up to read_timeout.
asio::awaitable<Result<MasterEndpoint>> exchange_master(RoundStore& store,
                                                        const RdzvSettings& settings,
                                                        RoundResult round,
                                                        std::optional<MasterEndpoint> mine);

/// Counts this node as done in `round` and waits until every member of it is, at most
/// `timeout` (barrier_wait: a poll, or a watch on a store that watches).
asio::awaitable<Result<void>> exit_barrier(RoundStore& store, const RdzvSettings& settings,
                                           RoundResult round, std::chrono::milliseconds timeout);

}  // namespace ddprun::rdzv
