#pragma once
// `ddprun status` rendering (pure): a rendezvous state and the wall-clock time of the reading
// turned into a human table or a JSON document. The I/O lives in status/command.hpp.

#include "ddprun/rdzv/state.hpp"

#include <string>

namespace ddprun::status {

/// "3.2s ago" for a heartbeat at `then` seen at `now` (milliseconds since the epoch); a
/// heartbeat from the future (clock skew between machines) reads "0.0s ago".
std::string render_age(rdzv::WallMs then, rdzv::WallMs now);

/// The table: a summary line (round, complete/joining, open/closed), the last reported
/// failure, then participants in group-rank order and waiting nodes, each with address, pid,
/// nproc, role and heartbeat age. Ends with a newline.
std::string render_status_table(const rdzv::RdzvState& state, rdzv::WallMs now);

/// The same facts as one JSON object (one line, sorted keys), heartbeat ages in seconds.
std::string render_status_json(const rdzv::RdzvState& state, rdzv::WallMs now);

}  // namespace ddprun::status
