#pragma once
// DynamicRendezvous: the thin executor of the pure algorithm in decide.hpp over a Kv store.
// It runs on the agent's single io_context; every call is a coroutine on that context.

#include "ddprun/net/asio.hpp"
#include "ddprun/rdzv/decide.hpp"
#include "ddprun/rdzv/exclusion.hpp"
#include "ddprun/rdzv/header_update.hpp"
#include "ddprun/rdzv/kv.hpp"
#include "ddprun/rdzv/run_end.hpp"
#include "ddprun/rdzv/spares.hpp"
#include "ddprun/rdzv/stacks.hpp"
#include "ddprun/rdzv/stall_figures.hpp"
#include "ddprun/util/clock.hpp"
#include "ddprun/util/random.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ddprun::rdzv {

/// One formed round, as seen by this node.
struct RoundResult {
  int round = 0;
  Assignment assignment;  ///< this node's ranks and worker prefix sums
  int restarts = 0;       ///< the job's failed rounds before this one (RoundHeader::failures)
  /// The members in group-rank order when there are at most k_max_named_ids of them (for
  /// messages); empty for larger rounds, which no node reads whole.
  std::vector<NodeDesc> members;

  [[nodiscard]] int group_rank() const { return assignment.group_rank; }
  [[nodiscard]] int group_world_size() const { return assignment.group_world_size; }
};

/// Where workers find their store (MASTER_ADDR / MASTER_PORT of the round).
struct MasterEndpoint {
  std::string addr;
  int port = 0;
  bool operator==(const MasterEndpoint&) const = default;
};

/// One member's answer to a stacks request.
struct StacksAnswer {
  int group_rank = 0;
  std::string summary;  ///< what it published (opaque here)
};

/// What collect_stacks() gathered within its bound.
struct StacksGathered {
  std::vector<StacksAnswer> answers;  ///< ascending group rank
  std::vector<int> missing;           ///< group ranks that did not answer, ascending
  /// unanswered_names(missing, the round's members): one per missing rank, its node's
  /// address when known ("gpu-03"), else "group rank 3".
  std::vector<std::string> missing_names;
  std::string error;  ///< why nothing could be asked or read (no request, the store's error)
};

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
  /// Called once for each exclusion this node learns of (its own included), as it reads
  /// the header; each is also logged.
  void set_exclusion_listener(std::function<void(const Exclusion&)> listener);
  /// Called when this node, a spare, joins a round in place of members of the round it waited
  /// for (spares.hpp); it is also logged.
  void set_spare_listener(std::function<void(const SpareJoined&)> listener);
  /// Whether the run was closed (the job ended); an excluded store host serves until then.
  asio::awaitable<Result<bool>> run_closed();

  /// Group rank 0 publishes `mine` under the round's prefix; every node (rank 0 included)
  /// reads it back, waiting up to read_timeout.
  asio::awaitable<Result<MasterEndpoint>> exchange_master(RoundResult round,
                                                          std::optional<MasterEndpoint> mine);

  /// Counts this node as done in its last round and waits until every member of that round
  /// is, at most `timeout`. Heartbeats continue meanwhile.
  asio::awaitable<Result<void>> exit_barrier(std::chrono::milliseconds timeout);

  /// Stops heartbeats and closes the run (bounded by close_timeout); later joins fail.
  /// `finished`: this node's workers succeeded, so the job finished (run_end.hpp).
  asio::awaitable<Result<void>> shutdown(bool finished = false);

  /// Where a member that finds the run's keys gone asks how it ended (etcd-v3: the end record
  /// the last agent out left); without one, or when it knows nothing, the member is told the
  /// run is gone. Either way it does not start a new run.
  using RunEndLookup = std::function<asio::awaitable<Result<std::optional<RunEnd>>>()>;
  void set_run_end_lookup(RunEndLookup lookup) { run_end_lookup_ = std::move(lookup); }

  // --- Job-wide stacks (stacks.hpp). ---

  /// Asks every other member of the current round for its workers' stacks; this node will
  /// collect answers for `collect_for` (pass collect_stacks' bound). When another member's
  /// request of the round is still being collected, that one stands and is returned instead:
  /// answer it (publish_stacks) rather than collect. Errors: no round yet, the store's error.
  asio::awaitable<Result<StacksRequest>> request_stacks(std::string reason,
                                                        std::chrono::milliseconds collect_for);
  /// The request this node last made, was asked by (watch() returned stacks_requested) or
  /// was handed by request_stacks().
  const std::optional<StacksRequest>& stacks_request() const { return stacks_request_; }
  /// Files this node's answer to stacks_request() under the round's keys (by group rank).
  asio::awaitable<Result<void>> publish_stacks(std::string summary);
  /// The requester's side: reads every other member's answer to stacks_request(), looking
  /// every poll_interval (one MULTI_GET per 1024 unanswered members), until all arrived or
  /// `bound` passed.
  asio::awaitable<StacksGathered> collect_stacks(std::chrono::milliseconds bound);

  /// When this node's workers last made progress (wall ms; nullopt: unknown or no workers).
  /// Each heartbeat then also writes it (progress_key) in the same request.
  void set_progress_source(std::function<std::optional<WallMs>()> source);
  /// With --stall-timeout auto: each heartbeat also writes this node's timeout and figures
  /// (node_stall_key) and, once it is in a round, raises the round's maximum (round_stall_key)
  /// to them and hands that to `share.adopt`: one more read per keep-alive, and a write only
  /// when this node learned more than the round knew (stall_figures.hpp).
  void set_stall_share(StallShare share) { stall_share_ = std::move(share); }

  const NodeDesc& self() const { return self_; }
  const RdzvSettings& settings() const { return settings_; }
  /// The time source its deadlines use; the agent's loops around it use it too.
  const util::Clock& clock() const { return clock_; }

 private:
  using Header = ReadHeader;  ///< the header and its bytes, the compare-and-set fencing token
  using Change = HeaderChange;
  struct OpGuard;

  asio::awaitable<Result<Header>> read_header();
  /// update_header (header_update.hpp) with this node's backoff after a lost race: the header
  /// written, or the one the change no longer applied to; ErrorCode::timeout past `deadline`
  /// (wall ms).
  asio::awaitable<Result<RoundHeader>> update(const Change& change,
                                              std::optional<WallMs> deadline = std::nullopt);
  asio::awaitable<Result<std::string>> read_one(std::string key);  ///< "" when missing
  asio::awaitable<Result<std::vector<std::string>>> read_many(std::vector<std::string> keys);
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
  /// After a join's step failed with `e`: pauses (etcd_retry_pause: only etcd's failures may
  /// pass) and returns true when the join should look again (the Kv says the failure may
  /// pass, the `attempt`-th in a row, and the join deadline leaves room for the pause), false
  /// when the join fails with `e`.
  asio::awaitable<bool> pause_after(const Error& e, int attempt);
  asio::awaitable<Error> join_failed(const RoundHeader& h, JoinStep step);
  /// A member of the run found its keys gone: how it ended (the lookup), as an error to end on.
  asio::awaitable<Error> run_gone();
  /// A keep-alive written at `beat`: a silence before it past the bound is remembered.
  void note_beat(WallMs beat);
  /// When the others dropped this node since its last round, if they did (dropped_, or a
  /// silence going on now).
  std::optional<WallMs> dropped() const;
  asio::awaitable<void> log_progress(const RoundHeader& h);
  asio::awaitable<void> share_stall_figures(StallFigures mine);
  /// Who took a slot of a round: counts, and the nodes of the first k_max_named_ids slots.
  struct Arrivals {
    int live = 0;   ///< slots taken minus withdrawn
    int taken = 0;  ///< slots taken
    std::vector<NodeDesc> live_named;
    std::vector<NodeDesc> withdrawn;
  };
  asio::awaitable<Arrivals> arrivals(int round);
  asio::awaitable<void> fill_missing(const std::vector<std::string>& keys,
                                     std::vector<std::string>& texts);
  asio::awaitable<void> sleep(std::chrono::milliseconds d);
  /// Waits `d`, less when one of `keys` changes first (Kv::wait_for_change); true if it did.
  asio::awaitable<bool> wait_for_others(std::vector<std::string> keys, std::chrono::milliseconds d);
  asio::awaitable<void> jitter();
  asio::awaitable<void> heartbeat_loop(std::shared_ptr<DynamicRendezvous> keep, int generation);
  asio::awaitable<void> beat_once();
  /// One look; `watched_beat` becomes the watched member's last heartbeat it read.
  asio::awaitable<RunSignal> watch_once(std::optional<WallMs>& failing_since,
                                        std::optional<WallMs>& watched_beat);
  /// What a running look reads: the header, the round's stacks request and the watched
  /// member's heartbeat.
  std::vector<std::string> watched_keys() const;
  /// What ends a wait between two running looks on a store that watches: a change of the
  /// header or the stacks request, the removal of the watched heartbeat (its lease ran out);
  /// not its writes: it is judged by its time, at the look made when it would turn silent
  /// (watch_wait).
  WatchSet wake_set() const;
  asio::awaitable<bool> slot_won(int round);
  /// watch_once's look at the round's stacks request: stacks_requested once per request.
  RunSignal stacks_signal(int round, const std::string& text);
  /// The seq of `round` this node was last told of, answered or made (0: none).
  int stacks_seen(int round) const { return stacks_round_ == round ? stacks_seen_ : 0; }
  void mark_stacks_seen(int round, const StacksRequest& r);
  /// One look at the answers of `waiting` (group ranks): those that arrived move to `out`.
  asio::awaitable<void> read_answers(int round, int seq, std::vector<int>& waiting,
                                     StacksGathered& out);
  /// The members of `round` in group-rank order (read from the store for large rounds);
  /// empty when they cannot be had.
  asio::awaitable<std::vector<NodeDesc>> round_members(int round);
  /// Starts the heartbeat loop, once (before the first join); later calls do nothing.
  void start_heartbeats();
  /// Logs and reports (exclusion_listener_) the exclusions of `h` not seen before.
  void note_exclusions(const RoundHeader& h);
  /// This node waited on the wait list of `waited_round` and is a member of `joined`: whose
  /// places it took, logged and reported (spare_listener_).
  asio::awaitable<void> note_spare(int waited_round, const RoundResult& joined);
  JoinView join_view() const;
  /// Notes the round of a header read while joining (a spare's grace counts from it) and
  /// whether this node stands by in it as a spare.
  void note_join_header(const RoundHeader& h);
  WallMs wall_now() const;

  asio::io_context& ctx_;
  Kv& kv_;
  RdzvSettings settings_;
  NodeDesc self_;
  const util::Clock& clock_;
  std::string key_;
  util::Random& random_;
  asio::steady_timer heartbeat_timer_;
  asio::steady_timer watch_timer_;
  bool heartbeats_on_ = false;
  int heartbeat_generation_ = 0;  ///< a loop runs while its generation is current
  int watch_generation_ = 0;
  bool leaving_ = false;  ///< leave() began: every other op ends at its next step
  int ops_running_ = 0;   ///< join loops in progress
  bool ever_joined_ = false;
  WallMs join_deadline_ = 0;
  WallMs join_started_ = 0;
  WallMs next_progress_log_ = 0;
  std::optional<WallMs> last_warning_;  ///< of this join being short of min_nodes
  bool hint_given_ = false;             ///< settings_.incomplete_hint was logged once
  int slot_ = 0;                        ///< this node's slot in slot_round_
  int slot_round_ = -1;
  /// A slot counted whose node could not be written yet: take_slot() writes this one instead
  /// of counting another (a join that looks again after a failed write).
  struct Counted {
    int round = -1;
    int slot = 0;
  } counted_;
  asio::steady_timer join_pause_;  ///< pause_after()'s; leave() cancels it
  int waiting_round_ = -1;         ///< the round whose wait list counts this node
  int stood_by_round_ = -1;        ///< the round this node stood by in as a spare
  int seen_round_ = -1;            ///< the header's round when this node last read it
  WallMs seen_round_at_ = 0;       ///< when it first saw seen_round_
  std::optional<RoundResult> last_round_;
  std::optional<StacksRequest> stacks_request_;
  int stacks_round_ = -1;  ///< the round of stacks_seen_
  int stacks_seen_ = 0;
  std::function<std::optional<WallMs>()> progress_source_;
  StallShare stall_share_;
  std::vector<Exclusion> exclusions_seen_;  ///< the header's, as last read
  std::function<void(const Exclusion&)> exclusion_listener_;
  std::function<void(const SpareJoined&)> spare_listener_;
  std::optional<WallMs> last_beat_;  ///< when a keep-alive of this node was last written
  /// Since its last round: when the others dropped it, its keep-alives having stopped for the
  /// keep-alive bound (its agent was frozen or cut off), as it found on its next keep-alive.
  std::optional<WallMs> dropped_;
  RunEndLookup run_end_lookup_;
};

}  // namespace ddprun::rdzv
