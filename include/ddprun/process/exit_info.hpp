#pragma once
// Pure helpers about process exits and signals: decoding wait statuses, naming signals,
// and the kill-escalation plan expressed as data.

#include "ddprun/util/result.hpp"

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::process {

/// How a child ended. `code()` is torchrun's exitcode: the exit status, or -signal.
struct ExitInfo {
  int exit_status = 0;  ///< valid when !signaled
  int signal = 0;       ///< valid when signaled
  bool signaled = false;
  bool core_dumped = false;

  int code() const { return signaled ? -signal : exit_status; }
  bool success() const { return !signaled && exit_status == 0; }
};

/// Decodes a waitpid() status word.
ExitInfo decode_wait_status(int status);

/// "SIGSEGV" for 11; "signal 77" for numbers without a name.
std::string signal_name(int sig);

/// Accepts "SIGTERM", "TERM", "sigterm" or a number; errors name the text.
Result<int> parse_signal(std::string_view text);

/// One entry of a signal list that cannot be used, with why ("unknown signal ...").
struct IgnoredSignal {
  std::string text;
  std::string reason;
};

/// A parsed --signals-to-handle list: the usable signals in order, and the entries left out.
struct SignalList {
  std::vector<int> signals;
  std::vector<IgnoredSignal> ignored;
};

/// torchrun's --signals-to-handle list ("SIGTERM,SIGINT"). Like torchrun, an entry that is not
/// a signal (or cannot be handled: SIGKILL, SIGSTOP, and SIGCHLD, which ddprun reaps with) is
/// left out rather than refused; the caller warns about each one.
SignalList parse_signal_list(std::string_view text);

/// One step of a stop: send `signal` to every live worker group, then wait up to `wait`
/// for them to exit before the next step.
struct StopStep {
  int signal = 0;
  std::chrono::milliseconds wait{0};
};
using StopPlan = std::vector<StopStep>;

/// Time given to SIGKILL to take effect before a worker is reported abandoned.
inline constexpr std::chrono::milliseconds k_kill_wait{5000};

/// SIGCONT (wake stopped workers), then `first_signal` with `grace`, then SIGKILL.
StopPlan make_stop_plan(int first_signal, std::chrono::milliseconds grace);

/// Whether `sig` ends a process whose /proc/<pid>/status is `proc_status`: SIGKILL always;
/// another signal when its default action terminates and the process neither catches
/// (SigCgt) nor ignores (SigIgn) it. Unreadable masks count as not caught.
bool signal_ends_process(std::string_view proc_status, int sig);

/// What the kernel says of a process that outlived SIGKILL (/proc/<pid>/stat and wchan).
struct ProcessState {
  char state = '?';   ///< stat's state letter: 'D' uninterruptible sleep, 'Z' zombie, ...
  std::string wchan;  ///< the kernel function it waits in; "" when not told
};

/// The state letter of a /proc/<pid>/stat line (the field after the command's closing
/// parenthesis, which may itself hold spaces and parentheses); '?' when unreadable.
char parse_stat_state(std::string_view stat);

/// "D (uninterruptible sleep)", "R (running)", ... for a stat state letter.
std::string describe_state(char state);

}  // namespace ddprun::process
