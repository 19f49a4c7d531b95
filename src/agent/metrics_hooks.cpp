#include "ddprun/agent/metrics_hooks.hpp"

#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace ddprun::agent {

namespace {

/// What the hooks share about the round under way.
struct RoundNotes {
  std::optional<RoundCause> first_failure;
};

/// Fields 14 and 15 (utime, stime) and 22 (starttime) of /proc/self/stat, in clock ticks; the
/// command name (field 2) may hold spaces, so counting starts after its closing parenthesis.
struct StatTicks {
  double cpu = 0;
  double start = 0;
};

std::optional<StatTicks> read_stat_ticks() {
  std::ifstream in("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos) {
    return std::nullopt;
  }
  std::istringstream fields(text.substr(close + 2));
  std::string f;
  StatTicks t;
  // After the name: field 3 (state) is the first; utime is field 14, starttime field 22.
  for (int field = 3; field <= 22 && fields >> f; ++field) {
    if (field == 14 || field == 15) {
      t.cpu += std::stod(f);
    } else if (field == 22) {
      t.start = std::stod(f);
      return t;
    }
  }
  return std::nullopt;
}

double boot_time_seconds() {
  std::ifstream in("/proc/stat");
  std::string key;
  double value = 0;
  while (in >> key) {
    if (key == "btime" && in >> value) {
      return value;
    }
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 0;
}

}  // namespace

std::optional<RoundCause> cause_of(Outcome outcome, std::optional<RoundCause> first_failure) {
  switch (outcome) {
    case Outcome::failed:
      return first_failure.value_or(RoundCause::exit_code);
    case Outcome::stalled:
      return RoundCause::stall;
    case Outcome::membership_changed:
    case Outcome::store_lost:
      return RoundCause::lost_node;
    case Outcome::peer_failed:
      return RoundCause::peer_failed;
    case Outcome::succeeded:
    case Outcome::signaled:
      break;
  }
  return std::nullopt;
}

SupervisorHooks with_metrics(const SupervisorHooks& inner, Metrics& metrics,
                             const util::Clock& clock) {
  auto notes = std::make_shared<RoundNotes>();
  SupervisorHooks h = inner;
  h.workers_started = [&metrics, &clock, notes, next = inner.workers_started](
                          const Round& round, const std::vector<pid_t>& pids) {
    notes->first_failure.reset();
    metrics.joined(clock.now(), round.round_number);
    if (next) {
      next(round, pids);
    }
  };
  h.worker_exited = [notes, next = inner.worker_exited](const WorkerRanks& r, pid_t pid,
                                                        const process::ExitInfo& e) {
    if (!e.success() && !notes->first_failure) {
      notes->first_failure = e.signaled ? RoundCause::signal : RoundCause::exit_code;
    }
    if (next) {
      next(r, pid, e);
    }
  };
  h.watchdog_expired = [notes, next = inner.watchdog_expired](const WorkerRanks& r,
                                                              const TimerExpiry& e) {
    if (!notes->first_failure) {
      notes->first_failure = RoundCause::file_timer;
    }
    if (next) {
      next(r, e);
    }
  };
  h.round_ended = [&metrics, &clock, notes, next = inner.round_ended](Outcome outcome, Step step,
                                                                      int restarts_left) {
    const bool restarting = step == Step::restart || step == Step::restart_free;
    if (auto cause = cause_of(outcome, notes->first_failure)) {
      metrics.round_ended(*cause, restarting);
    }
    if (restarting) {
      metrics.joining(clock.now());
    }
    if (next) {
      next(outcome, step, restarts_left);
    }
  };
  h.stall_timeout_changed = [&metrics, next = inner.stall_timeout_changed](
                                std::chrono::milliseconds timeout, const std::string& why) {
    metrics.stall_timeout(timeout, "learned");
    if (next) {
      next(timeout, why);
    }
  };
  h.unhealthy = [&metrics, next = inner.unhealthy](const std::string& reason,
                                                   const std::vector<std::string>& lines) {
    metrics.round_ended(RoundCause::unhealthy, false);
    if (next) {
      next(reason, lines);
    }
  };
  return h;
}

ProcessFigures read_process_figures() {
  ProcessFigures p;
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  if (auto t = read_stat_ticks(); t && ticks > 0) {
    p.cpu_seconds = t->cpu / ticks;
    p.start_time_seconds = boot_time_seconds() + t->start / ticks;
  }
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0;
  std::uint64_t resident = 0;
  if (statm >> size >> resident) {
    p.resident_bytes = resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  }
  return p;
}

}  // namespace ddprun::agent
