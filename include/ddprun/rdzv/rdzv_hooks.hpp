#pragma once
// What a DynamicRendezvous tells its owner as it learns it, and where it asks how a run ended.
// Each may be left empty.

#include "ddprun/net/asio.hpp"
#include "ddprun/rdzv/exclusion.hpp"
#include "ddprun/rdzv/run_end.hpp"
#include "ddprun/rdzv/spares.hpp"
#include "ddprun/util/result.hpp"

#include <functional>
#include <optional>

namespace ddprun::rdzv {

struct RdzvHooks {
  /// Called once for each exclusion this node learns of (its own included), as it reads the
  /// header; each is also logged.
  std::function<void(const Exclusion&)> excluded;
  /// Called when this node, a spare, joins a round in place of members of the round it
  /// waited for (spares.hpp); it is also logged.
  std::function<void(const SpareJoined&)> spare_joined;
  /// Where a member that finds the run's keys gone asks how it ended (etcd-v3: the end record
  /// the last agent out left); without one, or when it knows nothing, the member is told the
  /// run is gone. Either way it does not start a new run.
  std::function<asio::awaitable<Result<std::optional<RunEnd>>>()> run_end;
};

}  // namespace ddprun::rdzv
