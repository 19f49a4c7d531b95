#pragma once
// KeepAlive: this node's heartbeat in the rendezvous, from its first join until stop(). Each
// beat writes the heartbeat key and, in the same request, the workers' last progress and
// (--stall-timeout auto) this node's stall figures, then raises the round's shared figures
// (stall_figures.hpp). It also remembers whether the others dropped this node: a silence of
// its own beats past the keep-alive bound (run_end.hpp's dropped_at).

#include "ddprun/net/asio.hpp"
#include "ddprun/rdzv/round_store.hpp"
#include "ddprun/rdzv/settings.hpp"
#include "ddprun/rdzv/stall_figures.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace ddprun::rdzv {

class KeepAlive {
 public:
  /// `store`, `settings` and `round` (the round this node is in, as the executor keeps it)
  /// must outlive it.
  KeepAlive(asio::io_context& ctx, RoundStore& store, const RdzvSettings& settings,
            std::string self_id, const std::optional<RoundResult>& round);

  /// Starts the beats, once; later calls do nothing until stop(). `keep` holds the owner
  /// alive while the loop runs. The first beat is the one the join writes with the node
  /// (note_beat): no extra request in the burst of a large job's first round.
  void start(std::shared_ptr<void> keep);
  void stop();
  /// A heartbeat of this node was written at `beat` (by a beat or with its slot).
  void note_beat(WallMs beat);
  /// When the others dropped this node since it last joined a round, if they did (a silence
  /// found at a beat, or one going on now).
  [[nodiscard]] std::optional<WallMs> dropped() const;
  /// This node joined a round: a drop before it is forgotten.
  void forget_drop() { dropped_.reset(); }

  /// When this node's workers last made progress (wall ms; nullopt: unknown or no workers).
  void set_progress_source(std::function<std::optional<WallMs>()> source) {
    progress_source_ = std::move(source);
  }
  /// With --stall-timeout auto: each beat also writes this node's timeout and figures
  /// (node_stall_key) and, once it is in a round, raises the round's maximum (round_stall_key)
  /// to them and hands that to `share.adopt`: one more read per keep-alive, and a write only
  /// when this node learned more than the round knew.
  void set_stall_share(StallShare share) { stall_share_ = std::move(share); }

 private:
  asio::awaitable<void> loop(std::shared_ptr<void> keep, int generation);
  asio::awaitable<void> beat_once();
  asio::awaitable<void> share_stall_figures(StallFigures mine);

  RoundStore& store_;
  const RdzvSettings& settings_;
  std::string self_id_;
  const std::optional<RoundResult>& round_now_;
  asio::steady_timer timer_;
  bool on_ = false;
  int generation_ = 0;  ///< a loop runs while its generation is current
  std::optional<WallMs> last_beat_;
  std::optional<WallMs> dropped_;
  std::function<std::optional<WallMs>()> progress_source_;
  StallShare stall_share_;
};

}  // namespace ddprun::rdzv
