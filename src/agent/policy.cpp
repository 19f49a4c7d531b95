#include "ddprun/agent/policy.hpp"

namespace ddprun::agent {

Outcome outcome_of(rdzv::RunSignal s) {
  switch (s) {
    case rdzv::RunSignal::peer_failed:
    case rdzv::RunSignal::closed:
      return Outcome::peer_failed;
    case rdzv::RunSignal::store_lost:
      return Outcome::store_lost;
    case rdzv::RunSignal::none:
    case rdzv::RunSignal::membership_changed:
    case rdzv::RunSignal::stacks_requested:
      break;
  }
  return Outcome::membership_changed;
}

Step next_step(Outcome outcome, int restarts_left) {
  switch (outcome) {
    case Outcome::succeeded:
      return Step::finish_success;
    case Outcome::signaled:
      return Step::exit_signaled;
    case Outcome::membership_changed:
      return Step::restart_free;
    case Outcome::store_lost:
      return Step::exit_store_lost;
    case Outcome::failed:
    case Outcome::stalled:
    case Outcome::peer_failed:
      return restarts_left > 0 ? Step::restart : Step::fail;
  }
  return Step::fail;
}

std::string to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::succeeded:
      return "SUCCEEDED";
    case Outcome::failed:
      return "FAILED";
    case Outcome::signaled:
      return "SIGNALED";
    case Outcome::membership_changed:
      return "MEMBERSHIP_CHANGED";
    case Outcome::stalled:
      return "STALLED";
    case Outcome::peer_failed:
      return "PEER_FAILED";
    case Outcome::store_lost:
      return "STORE_LOST";
  }
  return "UNKNOWN";
}

}  // namespace ddprun::agent
