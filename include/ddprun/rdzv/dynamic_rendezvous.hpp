#pragma once
// DynamicRendezvous: the executor of the pure algorithm in decide.hpp over a Kv store. It
// joins rounds, watches the running one and ends the run; the features beside that are units
// it owns and applies: KeepAlive (heartbeats), StacksExchange (job-wide stacks), JoinProgress
// (what a waiting join says), over one RoundStore; exclusions, crash loops and spares are pure
// with_*/decide_* functions applied in its header updates.
// It runs on the agent's single io_context; every call is a coroutine on that context.

#include "ddprun/net/asio.hpp"
#include "ddprun/rdzv/decide.hpp"
#include "ddprun/rdzv/header_update.hpp"
#include "ddprun/rdzv/join_progress.hpp"
#include "ddprun/rdzv/join_state.hpp"
#include "ddprun/rdzv/keep_alive.hpp"
#include "ddprun/rdzv/kv.hpp"
#include "ddprun/rdzv/rdzv_hooks.hpp"
#include "ddprun/rdzv/round_keys.hpp"
#include "ddprun/rdzv/round_store.hpp"
#include "ddprun/rdzv/stacks_exchange.hpp"
#include "ddprun/util/clock.hpp"
#include "ddprun/util/random.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ddprun::rdzv {

/// Lives in a shared_ptr (create()): its heartbeat loop and every pending call hold a reference,
/// so the object outlives them. Heartbeats run from the first completed round until shutdown()
/// or stop(); until then io_context::run() does not run out of work.
class DynamicRendezvous : public std::enable_shared_from_this<DynamicRendezvous> {
  struct Passkey {};

 public:
  /// `kv`, `clock` and `random` (its jitter and backoff) must outlive the returned object and
  /// every coroutine it started.
  static std::shared_ptr<DynamicRendezvous> create(asio::io_context& ctx, Kv& kv,
                                                   RdzvSettings settings, NodeDesc self,
                                                   const util::Clock& clock,
                                                   util::Random& random = util::agent_random());
  DynamicRendezvous(Passkey, asio::io_context& ctx, Kv& kv, RdzvSettings settings, NodeDesc self,
                    const util::Clock& clock, util::Random& random);
  DynamicRendezvous(const DynamicRendezvous&) = delete;
  DynamicRendezvous& operator=(const DynamicRendezvous&) = delete;

  /// Stops heartbeats and ends watch() locally, writing nothing (as if this agent died).
  /// shutdown() does this too and then closes the run.
  void stop();

  /// For an agent stopped by a signal: stops heartbeats and watch(), ends any op in progress
  /// (a pending next_round() fails), then removes this node from the participants or the wait
  /// list, recorded as having left, so peers re-rendezvous at once instead of after the
  /// keep-alive bound. Gives up with ErrorCode::timeout at `bound`; a store call that blocks
  /// longer is bounded only by the Kv, so the caller should not wait for it beyond `bound`.
  asio::awaitable<Result<void>> leave(std::chrono::milliseconds bound);

  /// Leaves the previous round (if any) and joins the next one; ends a pending watch().
  /// Errors: ErrorCode::closed (the run is closed), timeout (join_timeout, the message names
  /// expected and arrived nodes), or the store's error.
  asio::awaitable<Result<RoundResult>> next_round();

  /// While workers run: looks at the state every watch_interval, or, on a store that watches
  /// (etcd), as soon as the header, the round's stacks request or the watched member's
  /// heartbeat changes (at the latest every keep_alive_interval; waits.hpp), and returns the
  /// first signal other than none; returns none when stop_watch(), next_round() or shutdown()
  /// ends it.
  /// A store error is logged and retried (the next poll may succeed) until the store has
  /// failed for the keep-alive bound: then store_lost, with the error logged.
  asio::awaitable<RunSignal> watch();
  void stop_watch();

  /// Tells peers that this node's group failed in the current round (their watch() returns
  /// peer_failed): `report` without its round and reporter, which this fills in. Call before
  /// next_round(). When the failure makes a crash loop (crash_loop.hpp) the same update closes
  /// the run, and every node's next_round() fails with ErrorCode::given_up and the reason.
  asio::awaitable<Result<CrashStreak>> report_failure(FailedRound report);

  /// After report_failure(): when this node was the root cause of max_node_failures failed
  /// rounds in a row and its last round can go on without it (exclusion.hpp), records its
  /// exclusion for the others, stops heartbeats and watch(), and returns the exclusion; the
  /// node must not join again. nullopt: it stays.
  asio::awaitable<Result<std::optional<Exclusion>>> exclude_if_failing();
  /// This node failed its health checks (agent/health_check.hpp): records an exclusion with no
  /// failed rounds (Exclusion::failures 0) and `reason` for the others and `ddprun status`, and
  /// stops heartbeats and watch(); the node must not join again.
  asio::awaitable<Result<void>> exclude_unhealthy(std::string reason);
  /// Whether the run was closed (the job ended); an excluded store host serves until then.
  asio::awaitable<Result<bool>> run_closed();

  /// round_keys.hpp's, for `round`; exit_barrier for this node's last round (heartbeats go on).
  asio::awaitable<Result<MasterEndpoint>> exchange_master(RoundResult round,
                                                          std::optional<MasterEndpoint> mine);
  asio::awaitable<Result<void>> exit_barrier(std::chrono::milliseconds timeout);

  /// Stops heartbeats and closes the run (bounded by close_timeout); later joins fail.
  /// `finished`: this node's workers succeeded, so the job finished (run_end.hpp).
  asio::awaitable<Result<void>> shutdown(bool finished = false);

  /// Whom it tells of exclusions and spares, and where it asks how a run ended.
  RdzvHooks& hooks() { return hooks_; }
  /// It waits on a running round's wait list as a spare.
  bool standing_by() const { return join_.spare(); }

  /// The job-wide stacks request of the current round (watch() returns stacks_requested when
  /// another member asks). Hold this object (shared_ptr) while its coroutines run.
  StacksExchange& stacks() { return stacks_; }
  /// This node's heartbeat: what each beat also writes (the workers' progress, stall figures).
  KeepAlive& keep_alive() { return keep_alive_; }

  const NodeDesc& self() const { return self_; }
  const RdzvSettings& settings() const { return settings_; }
  /// The time source its deadlines use; the agent's loops around it use it too.
  const util::Clock& clock() const { return clock_; }

 private:
  using Header = ReadHeader;  ///< the header and its bytes, the compare-and-set fencing token
  using Change = HeaderChange;
  struct OpGuard;

  asio::awaitable<Result<Header>> read_header();
  asio::awaitable<Result<RoundHeader>> update(const Change& change,
                                              std::optional<WallMs> deadline = std::nullopt);
  asio::awaitable<Result<void>> take_slot(int round);
  asio::awaitable<Result<void>> withdraw();
  asio::awaitable<Result<void>> close_round(const RoundHeader& h);
  asio::awaitable<Result<std::optional<RoundResult>>> await_assignment(const RoundHeader& h,
                                                                       WallMs until);
  asio::awaitable<Result<std::optional<RoundResult>>> join_step(const RoundHeader& h,
                                                                const JoinDecision& d);
  asio::awaitable<Result<RoundResult>> join();
  /// One look at the header and the step it calls for: the round when it formed.
  asio::awaitable<Result<std::optional<RoundResult>>> join_once();
  asio::awaitable<bool> pause_after(const Error& e, int attempt);
  asio::awaitable<Error> join_failed(const RoundHeader& h, JoinStep step);
  /// A member of the run found its keys gone: how it ended (the lookup), as an error to end on.
  asio::awaitable<Error> run_gone();
  asio::awaitable<void> jitter();
  /// One look; `watched_beat` becomes the watched member's last heartbeat it read.
  asio::awaitable<RunSignal> watch_once(std::optional<WallMs>& failing_since,
                                        std::optional<WallMs>& watched_beat);
  std::vector<std::string> watched_keys() const;
  WatchSet wake_set() const;
  asio::awaitable<bool> slot_won(int round);
  /// Logs and reports (hooks_.excluded) the exclusions of `h` not seen before.
  void note_exclusions(const RoundHeader& h);
  /// This node waited on the wait list of `waited_round` and is a member of `joined`: whose
  /// places it took, logged and reported (hooks_.spare_joined).
  asio::awaitable<void> note_spare(int waited_round, const RoundResult& joined);
  std::optional<int> ran_round() const;  ///< the round of last_round_
  JoinView join_view() const { return join_.view(ran_round(), wall_now()); }
  WallMs wall_now() const { return store_.wall_now(); }

  Kv& kv_;
  RdzvSettings settings_;
  NodeDesc self_;
  const util::Clock& clock_;
  std::string key_;
  util::Random& random_;
  RoundStore store_;
  asio::steady_timer watch_timer_;
  int watch_generation_ = 0;
  bool leaving_ = false;  ///< leave() began: every other op ends at its next step
  int ops_running_ = 0;   ///< join loops in progress
  bool ever_joined_ = false;
  JoinState join_;
  asio::steady_timer join_pause_;          ///< pause_after()'s; leave() cancels it
  std::optional<RoundResult> last_round_;  ///< before the units, which read it
  KeepAlive keep_alive_;
  StacksExchange stacks_;
  JoinProgress progress_;
  std::vector<Exclusion> exclusions_seen_;  ///< the header's, as last read
  RdzvHooks hooks_;
};

}  // namespace ddprun::rdzv
