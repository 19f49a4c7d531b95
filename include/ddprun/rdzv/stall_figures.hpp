#pragma once
// What `--stall-timeout auto` has learned, as the nodes share it (docs/reliability.md, "The
// learned stall timeout"). Two keys, beside the rendezvous' own (state.hpp's layout):
//
//   ddprun/rdzv/<id>/stall/<node id>  the node's current timeout and figures, written in the
//                                     same request as its keep-alive (`ddprun status` reads it)
//   ddprun/rdzv/<id>/<r>/stall        the maximum of round r's members' figures: each member
//                                     raises it by compare-and-set when its own are larger,
//                                     and adopts it, once per keep-alive
//
// The figures only grow, so the maximum is the same whichever order the members write in.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace ddprun::rdzv {

struct StallFigures {
  /// The longest time from a round's start to its first progress (none: never measured).
  std::optional<std::chrono::milliseconds> startup;
  /// The longest silence between two progress events of one round (none: never closed).
  std::optional<std::chrono::milliseconds> gap;
  /// Healthy running: from each round's first progress to its last, summed over rounds.
  std::chrono::milliseconds running{0};
  bool operator==(const StallFigures&) const = default;
};

/// The field-wise maximum (a missing figure loses to any value).
StallFigures merge(const StallFigures& a, const StallFigures& b);

/// "startup gap running" in milliseconds, "-" for a missing figure: "41000 58000 7500000".
std::string encode_stall_figures(const StallFigures& f);
/// encode_stall_figures' text; "" or anything malformed: none (a key not written yet).
std::optional<StallFigures> decode_stall_figures(std::string_view text);

/// A node's own key: "<timeout ms> " + encode_stall_figures(f).
std::string encode_node_stall(std::chrono::milliseconds timeout, const StallFigures& f);
struct NodeStall {
  std::chrono::milliseconds timeout{0};
  StallFigures figures;
};
std::optional<NodeStall> decode_node_stall(std::string_view text);

/// How a node takes part (DynamicRendezvous::set_stall_share): `mine` says its timeout and
/// figures (nullopt: not learning) at each keep-alive; `adopt` gets the round's maximum.
struct StallShare {
  std::function<std::optional<NodeStall>()> mine;
  std::function<void(const StallFigures&)> adopt;
};

/// "ddprun/rdzv/<id>/stall/<node id>".
std::string node_stall_key(const std::string& run_id, const std::string& node_id);
/// "ddprun/rdzv/<id>/<r>/stall".
std::string round_stall_key(const std::string& run_id, int round);

}  // namespace ddprun::rdzv
