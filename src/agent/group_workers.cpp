// GroupWorkers (group_workers.hpp): the round's workers and their failures.

#include "ddprun/agent/group_workers.hpp"

#include "ddprun/errors/failure.hpp"
#include "ddprun/util/files.hpp"
#include "ddprun/util/strings.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>

namespace ddprun::agent {

namespace {

/// The error line in a signature (and so in the rendezvous header) is cut to this length.
constexpr std::size_t k_max_signature_line = 200;

/// The last line of `lines` with more than blanks, trimmed; "" when none.
std::string last_line(const std::vector<std::string>& lines) {
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    const auto begin = it->find_first_not_of(" \t\r");
    if (begin != std::string::npos) {
      return it->substr(begin, it->find_last_not_of(" \t\r") - begin + 1);
    }
  }
  return "";
}

/// The last line of the worker's error file (its exception, with torch's @record), else the
/// last line it wrote to stderr when the agent reads it or it goes to a file; "" when neither.
std::string last_error_line(const WorkerIo& io, int local_rank) {
  if (const auto path = io.error_file(local_rank); !path.empty()) {
    if (const auto text = util::read_file(path)) {
      if (const auto record = errors::parse_error_file(*text)) {
        if (auto line = last_line(util::split(record->traceback, '\n')); !line.empty()) {
          return line;
        }
      }
    }
  }
  return last_line(io.stderr_tail(local_rank));
}

WorkerFailure failure_of(const WorkerRecord& w, const WorkerIo& io, std::string reason) {
  const int lr = w.ranks().local_rank;
  return WorkerFailure{w.ranks(),        w.pid(),           w.exit(),
                       w.exit_time(),    io.error_file(lr), io.stderr_tail(lr),
                       std::move(reason)};
}

}  // namespace

void GroupWorkers::clear() {
  workers_.clear();
  failure_order_.clear();
}

WorkerRecord* GroupWorkers::alive(pid_t pid) {
  auto it = std::find_if(workers_.begin(), workers_.end(),
                         [pid](const WorkerRecord& w) { return w.pid() == pid && w.alive(); });
  return it == workers_.end() ? nullptr : &*it;
}

const WorkerRecord* GroupWorkers::ended(pid_t pid, const process::ExitInfo& exit,
                                        std::chrono::system_clock::time_point when) {
  auto* w = alive(pid);
  if (w == nullptr) {
    return nullptr;
  }
  if (w->ended(exit, when)) {
    failure_order_.push_back(static_cast<std::size_t>(w - workers_.data()));
  }
  return w;
}

bool GroupWorkers::all_succeeded() const {
  return std::all_of(workers_.begin(), workers_.end(),
                     [](const WorkerRecord& w) { return !w.alive() && w.exit().success(); });
}

bool GroupWorkers::any_watched() const {
  return std::any_of(workers_.begin(), workers_.end(),
                     [](const WorkerRecord& w) { return w.watched(); });
}

int GroupWorkers::running() const {
  return static_cast<int>(std::count_if(workers_.begin(), workers_.end(),
                                        [](const WorkerRecord& w) { return w.alive(); }));
}

std::vector<StackTarget> GroupWorkers::stack_targets(pid_t keep_running) {
  std::vector<StackTarget> targets;
  for (auto& w : workers_) {
    if (w.alive()) {
      w.request_stop();
      targets.push_back(StackTarget{w.ranks(), w.pid(), w.pid() == keep_running});
    }
  }
  return targets;
}

bool GroupWorkers::all_stopped(const process::Launcher& launcher) const {
  return std::none_of(workers_.begin(), workers_.end(), [&launcher](const WorkerRecord& w) {
    return w.alive() || launcher.group_alive(w.pid());
  });
}

void GroupWorkers::signal(process::Launcher& launcher, int sig, int asked_with) {
  for (auto& w : workers_) {
    if (!w.alive() && !launcher.group_alive(w.pid())) {
      continue;
    }
    if (sig == SIGKILL && w.alive()) {
      spdlog::warn("Unable to shutdown process {} via {}, forcefully exiting via SIGKILL", w.pid(),
                   process::signal_name(asked_with));
    } else if (sig != SIGCONT && sig != SIGKILL && w.alive()) {
      spdlog::warn("Sending process {} closing signal {}", w.pid(), process::signal_name(sig));
    }
    w.request_stop();
    launcher.signal_group(w.pid(), sig);
  }
}

std::vector<StuckWorker> GroupWorkers::after_stop(process::Launcher& launcher) const {
  std::vector<StuckWorker> stuck;
  for (const auto& w : workers_) {
    if (w.alive()) {
      stuck.push_back(StuckWorker{w.ranks(), w.pid(), launcher.state_of(w.pid())});
    } else if (!launcher.group_alive(w.pid())) {
      launcher.forget_group(w.pid());
    }
  }
  return stuck;
}

const WorkerRecord* GroupWorkers::first_failure() const {
  return failure_order_.empty() ? nullptr : &workers_[failure_order_.front()];
}

std::string GroupWorkers::failure_reason() const {
  const auto* w = first_failure();
  if (w == nullptr) {
    return "failure";
  }
  const auto name = w->exit().signaled ? errors::signal_name(w->exit().signal) : std::string();
  return "rank " + std::to_string(w->ranks().rank) +
         " failed (exitcode: " + std::to_string(w->exit().code()) +
         (name.empty() ? std::string() : ", " + name) + ")";
}

std::vector<WorkerFailure> GroupWorkers::failures(const WorkerIo& io,
                                                  const std::string& stall_reason) const {
  std::vector<WorkerFailure> out;
  for (auto i : failure_order_) {
    out.push_back(failure_of(workers_[i], io, workers_[i].timer_reason()));
  }
  if (out.empty() && !stall_reason.empty() && !workers_.empty()) {
    auto it = std::find_if(workers_.begin(), workers_.end(),
                           [](const WorkerRecord& x) { return x.alive() || !x.exit().success(); });
    out.push_back(failure_of(it != workers_.end() ? *it : workers_.front(), io, stall_reason));
  }
  return out;
}

std::string failure_signature(const WorkerRecord& w, const WorkerIo& io) {
  const auto& e = w.exit();
  std::string s = "rank " + std::to_string(w.ranks().rank) + ": ";
  s += e.signaled ? process::signal_name(e.signal) : "exitcode " + std::to_string(e.code());
  if (const auto line = last_error_line(io, w.ranks().local_rank); !line.empty()) {
    s += ": " + line.substr(0, k_max_signature_line);
  }
  return s;
}

}  // namespace ddprun::agent
