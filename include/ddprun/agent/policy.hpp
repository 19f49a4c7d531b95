#pragma once
// next_step: what the agent does once a round of workers ends (spec §5.2); outcome_of: how a
// rendezvous' answer ends it. Pure.

#include "ddprun/rdzv/run_signal.hpp"

#include <string>

namespace ddprun::agent {

/// How the local worker group's round ended.
enum class Outcome {
  succeeded,           ///< every worker exited 0
  failed,              ///< a worker exited non-zero or by a signal
  stalled,             ///< no output and no file-timer request for --stall-timeout
  signaled,            ///< the agent received a handled signal
  membership_changed,  ///< the rendezvous wants a new round (new node, lost node)
  peer_failed,         ///< another node's group failed; restart together
  store_lost,          ///< the rendezvous store is gone: no round can form again
};

enum class Step {
  finish_success,   ///< exit barrier, then exit 0
  restart,          ///< stop, consume one restart, start the next attempt
  restart_free,     ///< stop and start again without consuming a restart
  fail,             ///< stop, report, exit 1
  exit_signaled,    ///< stop with the received signal, leave the rendezvous, exit 1
  exit_store_lost,  ///< stop, exit 1 without touching the (unreachable) rendezvous
};

Step next_step(Outcome outcome, int restarts_left);

/// The round's outcome when the rendezvous' watch answers `s`: closed (finished, shut down,
/// a crash loop) ends it as a peer's failure, store_lost ends the job, the rest as a
/// membership change (stacks_requested is answered before and never ends a round).
Outcome outcome_of(rdzv::RunSignal s);

std::string to_string(Outcome outcome);

}  // namespace ddprun::agent
