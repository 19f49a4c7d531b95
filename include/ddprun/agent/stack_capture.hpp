#pragma once
// The stacks of still-running workers, taken before they are stopped (StackCapture).
// Python workers: `py-spy dump` when py-spy is on PATH (or DDPRUN_PY_SPY names it), else the
// faulthandler dump PYTHONFAULTHANDLER=1 makes on SIGABRT (the worker dies of it; it was being
// stopped anyway). --no-python workers: eu-stack, else gdb, else the process state and wait
// channel from /proc. Each rank's full capture goes to attempt_<n>/<local_rank>/stacks.txt (a
// temporary directory when files are off); a grouped report goes to stderr.

#include "ddprun/agent/seams.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/errors/stacks.hpp"
#include "ddprun/util/env.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::agent {

/// Lines of a Python worker's stderr the agent keeps, to find a faulthandler dump in.
inline constexpr std::size_t k_stack_dump_lines = 500;
/// How long taking every stack (in parallel) may last.
inline constexpr std::chrono::milliseconds k_capture_bound{3000};
/// How long the node that asked for the job's stacks waits for the other nodes' answers: their
/// watch interval, a capture and the store's round trips.
inline constexpr std::chrono::milliseconds k_peer_stacks_bound =
    k_capture_bound + std::chrono::milliseconds(2000);
/// How long every node of a multi-node capture holds its workers frozen before taking their
/// stacks: long enough for the other nodes' watches (a 250 ms poll) to see the request.
inline constexpr std::chrono::milliseconds k_freeze_hold{1000};
/// Names the py-spy to use instead of the one on PATH.
inline constexpr std::string_view k_py_spy_env = "DDPRUN_PY_SPY";

enum class StackMethod { py_spy, faulthandler, eu_stack, gdb, proc };
std::string_view to_string(StackMethod method);

/// The capture for the workers `command` starts (Python or not picks the tool).
std::unique_ptr<StackCapture> make_stack_capture(asio::io_context& ctx,
                                                 const config::WorkerCommand& command,
                                                 const util::Env& env, WorkerIo& io);

}  // namespace ddprun::agent
