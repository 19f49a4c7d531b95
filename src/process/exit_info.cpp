#include "ddprun/process/exit_info.hpp"

#include "ddprun/util/strings.hpp"

#include <sys/wait.h>

#include <array>
#include <charconv>
#include <csignal>
#include <cstdint>
#include <utility>

namespace ddprun::process {

namespace {

struct SignalName {
  int number;
  const char* name;
};

constexpr std::array<SignalName, 31> k_signals{{
    {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},       {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
    {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"},     {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
    {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"},     {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
    {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"},     {SIGTERM, "SIGTERM"}, {SIGSTKFLT, "SIGSTKFLT"},
    {SIGCHLD, "SIGCHLD"}, {SIGCONT, "SIGCONT"},     {SIGSTOP, "SIGSTOP"}, {SIGTSTP, "SIGTSTP"},
    {SIGTTIN, "SIGTTIN"}, {SIGTTOU, "SIGTTOU"},     {SIGURG, "SIGURG"},   {SIGXCPU, "SIGXCPU"},
    {SIGXFSZ, "SIGXFSZ"}, {SIGVTALRM, "SIGVTALRM"}, {SIGPROF, "SIGPROF"}, {SIGWINCH, "SIGWINCH"},
    {SIGIO, "SIGIO"},     {SIGPWR, "SIGPWR"},       {SIGSYS, "SIGSYS"},
}};

}  // namespace

ExitInfo decode_wait_status(int status) {
  ExitInfo info;
  if (WIFSIGNALED(status)) {
    info.signaled = true;
    info.signal = WTERMSIG(status);
    info.core_dumped = WCOREDUMP(status);
  } else if (WIFEXITED(status)) {
    info.exit_status = WEXITSTATUS(status);
  }
  return info;
}

std::string signal_name(int sig) {
  for (const auto& s : k_signals) {
    if (s.number == sig) {
      return s.name;
    }
  }
  return "signal " + std::to_string(sig);
}

Result<int> parse_signal(std::string_view text) {
  auto t = util::trim(text);
  if (auto n = util::parse_int(t); n) {
    if (*n > 0 && *n < NSIG) {
      return static_cast<int>(*n);
    }
    return make_error(ErrorCode::usage, "signal number " + util::quoted(t) + " is out of range");
  }
  std::string upper;
  for (char c : t) {
    upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  if (!util::starts_with(upper, "SIG")) {
    upper = "SIG" + upper;
  }
  for (const auto& s : k_signals) {
    if (upper == s.name) {
      return s.number;
    }
  }
  return make_error(ErrorCode::usage, "unknown signal " + util::quoted(t) +
                                          " (expected a name like SIGTERM or a number)");
}

SignalList parse_signal_list(std::string_view text) {
  SignalList out;
  for (const auto& part : util::split(text, ',')) {
    const auto t = std::string(util::trim(part));
    if (t.empty()) {
      continue;
    }
    auto sig = parse_signal(t);
    if (!sig) {
      out.ignored.push_back({t, sig.error().message});
    } else if (*sig == SIGKILL || *sig == SIGSTOP || *sig == SIGCHLD) {
      out.ignored.push_back(
          {t, "cannot be handled (SIGKILL, SIGSTOP and SIGCHLD are not allowed)"});
    } else {
      out.signals.push_back(*sig);
    }
  }
  return out;
}

StopPlan make_stop_plan(int first_signal, std::chrono::milliseconds grace) {
  return StopPlan{
      {SIGCONT, std::chrono::milliseconds(0)}, {first_signal, grace}, {SIGKILL, k_kill_wait}};
}

namespace {

/// The bit of `sig` in a /proc status mask line ("SigCgt:\t0000000000004a02").
bool mask_has(std::string_view status, std::string_view field, int sig) {
  auto at = status.find(field);
  if (at == std::string_view::npos) {
    return false;
  }
  const auto start = at + field.size();
  const auto value = util::trim(status.substr(start, status.find('\n', start) - start));
  std::uint64_t mask = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), mask, 16);
  if (ec != std::errc() || end != value.data() + value.size()) {
    return false;
  }
  return sig >= 1 && sig <= 64 && ((mask >> static_cast<unsigned>(sig - 1)) & 1U) != 0;
}

bool default_action_ends(int sig) {
  switch (sig) {
    case SIGCHLD:
    case SIGCONT:
    case SIGURG:
    case SIGWINCH:
    case SIGSTOP:
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
      return false;
    default:
      return sig > 0;
  }
}

}  // namespace

char parse_stat_state(std::string_view stat) {
  const auto close = stat.rfind(')');
  if (close == std::string_view::npos || close + 2 >= stat.size() || stat[close + 1] != ' ') {
    return '?';
  }
  return stat[close + 2];
}

std::string describe_state(char state) {
  const char* name = "unknown";
  switch (state) {
    case 'D':
      name = "uninterruptible sleep";
      break;
    case 'R':
      name = "running";
      break;
    case 'S':
      name = "sleeping";
      break;
    case 'T':
      name = "stopped";
      break;
    case 't':
      name = "tracing stop";
      break;
    case 'Z':
      name = "zombie";
      break;
    case 'X':
      name = "dead";
      break;
    default:
      break;
  }
  return std::string(1, state) + " (" + name + ")";
}

bool signal_ends_process(std::string_view proc_status, int sig) {
  if (sig == SIGKILL) {
    return true;
  }
  return default_action_ends(sig) && !mask_has(proc_status, "SigCgt:", sig) &&
         !mask_has(proc_status, "SigIgn:", sig);
}

}  // namespace ddprun::process
