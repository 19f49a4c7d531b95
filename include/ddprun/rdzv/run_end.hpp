#pragma once
// How a run ended, for an agent that was part of it and comes back after the end (its agent
// frozen past the keep-alive bound: a paused or migrated VM, a long network partition). It must
// learn that the job ended and exit at once with the status that fits, not start a new run and
// wait out its join timeout. While the run's keys last, the closed header says how it ended
// (closed_at, finished, stop_reason); on etcd-v3 the last agent out of a closed generation also
// leaves an end record (etcd_layout.hpp) on a lease of its own that outlives the keys. Pure.

#include "ddprun/rdzv/settings.hpp"
#include "ddprun/rdzv/state.hpp"
#include "ddprun/util/result.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace ddprun::rdzv {

struct RunEnd {
  WallMs at = 0;          ///< when the run was closed (0: not known)
  bool finished = false;  ///< the job's workers succeeded
  std::string reason;     ///< why it was stopped before the end (a crash loop); "" otherwise
  bool operator==(const RunEnd&) const = default;
};

/// How the run of a closed header ended; nullopt while it is not closed.
std::optional<RunEnd> run_end_of(const RoundHeader& h);

/// The end record's value (JSON) and back; decoding anything else is a protocol error.
std::string encode_run_end(const RunEnd& end);
Result<RunEnd> decode_run_end(std::string_view text);

/// "12:03:40": a wall time as the local clock shows it.
std::string render_clock(WallMs at);

/// When a node that runs no round has been silent past the keep-alive bound, the others have
/// dropped it: at about `last_beat` + the bound. nullopt when it has not been silent that long
/// (or never wrote a keep-alive).
std::optional<WallMs> dropped_at(std::optional<WallMs> last_beat, WallMs now,
                                 const RdzvSettings& settings);

/// What a member of the run that finds it ended is told, and how it exits: finished,
/// ErrorCode::finished_without (status 0), "rendezvous job42: the job finished at 12:03:40
/// without this node (it was dropped at 12:00:15: no keep-alive of it reached the store for
/// 15s)"; stopped (a crash loop), ErrorCode::given_up (status 3) with the reason; otherwise
/// ErrorCode::closed (status 1), "the job ended without success at ...".
Error render_run_end(const RunEnd& end, const RdzvSettings& settings,
                     std::optional<WallMs> dropped);

/// A member of a c10d run whose rendezvous store no longer answers (`e`, the store client's
/// error): the store lived in an agent, so it cannot tell a job that ended from a store host
/// that failed. "Connection refused" (a host that answers, with nothing listening) says the
/// hosting agent exited, for one reason or the other; anything else, that the host is down or
/// cut off. ErrorCode::closed (status 1), with what this node can tell.
Error render_store_gone(const Error& e, const RdzvSettings& settings,
                        std::optional<WallMs> dropped);

/// A member that finds the run's keys gone and no record of how it ended (the record expired,
/// or the store was wiped): ErrorCode::closed, saying so, rather than starting a new run.
Error render_run_gone(const RdzvSettings& settings, std::optional<WallMs> dropped);

}  // namespace ddprun::rdzv
