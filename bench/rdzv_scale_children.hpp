#pragma once
// The two kinds of child process of the multi-process rdzv_scale_bench, each driven by text
// lines on a control pipe from the parent and answering on another (rdzv_scale_procs.cpp):
//
//   store:  -> "port P"                    listening on 127.0.0.1:P
//           <- "stats"  -> "stats REQUESTS CONNECTIONS PEAK_RSS_KIB CPU_MS"
//           <- "quit"   -> the same stats line, then it exits
//   nodes:  -> "ready CONNECT_MS"          its nodes' store connections are open
//           <- "go T0_NS"                  every node joins round 0 (T0: steady clock, ns)
//           -> "joined ERRORS MS..."       once every node has its rank or failed; MS since T0
//           <- "lose INDEX T_NS"           the node of that index (if here) stops as if dead
//           -> "reformed ERRORS EXTRA MS..."  once every other node is in the next round;
//                                          MS since T; EXTRA: rounds joined before the loss
//           <- "quit"                      stops every node and exits
//
// Error texts go to stderr, one line each.

#include "rdzv_scale_common.hpp"

namespace rdzv_scale {

/// The store process: a ddprun store server on its own io_context and thread.
int store_main(int control_in, int control_out);

/// A node process: nodes [first, first + count) of `a.nodes`, each with its own store
/// connection pool and DynamicRendezvous, all on one io_context, against the store at `port`.
int nodes_main(const Args& a, int first, int count, std::uint16_t port, int control_in,
               int control_out);

}  // namespace rdzv_scale
