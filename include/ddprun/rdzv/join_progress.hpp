#pragma once
// JoinProgress: what a join that waits tells the user. At most every progress_interval an info
// line says who arrived (messages in decide.hpp); while the round is short of min_nodes, a
// warning every incomplete_warning_interval names who is missing, with the rendezvous hint
// the first time; a spare standing by says so instead.

#include "ddprun/net/asio.hpp"
#include "ddprun/rdzv/round_store.hpp"
#include "ddprun/rdzv/settings.hpp"
#include "ddprun/rdzv/spares.hpp"

#include <optional>

namespace ddprun::rdzv {

class JoinProgress {
 public:
  /// `store` and `settings` must outlive it.
  JoinProgress(RoundStore& store, const RdzvSettings& settings);

  /// A join begins now; returns the time it began (wall ms).
  WallMs start();
  /// After a look at `h` that left the join waiting: logs where it stands when a line is due.
  /// `standing_by`: this node waits as a spare; `join_deadline`: when the join gives up.
  asio::awaitable<void> log(const RoundHeader& h, bool standing_by, WallMs join_deadline);

 private:
  RoundStore& store_;
  const RdzvSettings& settings_;
  WallMs started_ = 0;
  WallMs next_log_ = 0;
  std::optional<WallMs> last_warning_;  ///< of this join being short of min_nodes
  bool hint_given_ = false;             ///< settings_.incomplete_hint was logged once
};

}  // namespace ddprun::rdzv
