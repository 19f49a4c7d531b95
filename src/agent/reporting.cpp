#include "ddprun/agent/reporting.hpp"

#include "ddprun/agent/import_hint.hpp"
#include "ddprun/errors/error_file.hpp"
#include "ddprun/errors/failure.hpp"
#include "ddprun/errors/failure_lines.hpp"
#include "ddprun/host/facts.hpp"
#include "ddprun/util/exit_status.hpp"
#include "ddprun/util/fatal.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>

namespace ddprun::agent {

namespace {

std::int64_t epoch_seconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

errors::ProcessFailure to_failure(const WorkerFailure& f, const errors::OomCounters& before,
                                  const errors::OomCounters& after) {
  errors::FailureInput in;
  in.local_rank = f.ranks.local_rank;
  in.rank = f.ranks.rank;
  in.pid = f.pid;
  in.exit_code = f.exit.code();
  in.error_file = f.error_file;
  if (!f.error_file.empty()) {
    in.record = errors::read_error_file(f.error_file);
  }
  in.now = epoch_seconds(f.when);
  in.stderr_tail = f.stderr_tail;
  in.oom_hint = errors::oom_suspected(in.exit_code, before, after);
  in.reason = f.reason;
  return errors::make_failure(std::move(in));
}

}  // namespace

Reporter::Reporter(const config::WorkerCommand& command, const config::OutputPlan& output,
                   const util::Env& env, const util::Clock& clock)
    : cfg_(command),
      env_(env),
      parent_error_file_(env.get_nonempty(std::string(errors::k_error_file_env))),
      clock_(clock) {
  if (!output.events_file.empty()) {
    auto log = errors::EventLog::open(output.events_file, clock_);
    if (!log) {
      throw Fatal(make_error(ErrorCode::config, "--events-file " + log.error().message));
    }
    events_.emplace(std::move(*log));
  }
}

SupervisorHooks Reporter::hooks() {
  SupervisorHooks h;
  h.workers_started = [this](const Round& round, const std::vector<pid_t>& pids) {
    oom_baseline_ = errors::read_oom_counters();
    attempt_ = round.info.restart_count;
    started_ = clock_.wall_now();
    stacks_.clear();  // stacks of an earlier attempt say nothing about this one
    if (events_) {
      int group_rank = round.ranks.empty() ? 0 : round.ranks[0].group_rank;
      int group_world = round.ranks.empty() ? 1 : round.ranks[0].group_world_size;
      events_->rendezvous(round.round_number, group_rank, group_world);
      events_->workers_started(attempt_, std::vector<int>(pids.begin(), pids.end()));
    }
  };
  h.worker_exited = [this](const WorkerRanks& r, pid_t pid, const process::ExitInfo& e) {
    if (events_) {
      events_->worker_exit(r.local_rank, r.rank, pid, e.code());
    }
  };
  h.round_ended = [this](Outcome outcome, Step step, int restarts_left) {
    if (!events_) {
      return;
    }
    if (step == Step::restart || step == Step::restart_free) {
      events_->restart(attempt_, restarts_left, to_string(outcome));
    } else {
      events_->stop(to_string(outcome));
    }
  };
  h.failed = [this](const std::vector<WorkerFailure>& f) { on_failed(f); };
  h.gave_up = [this](const std::string& reason) {
    gave_up_ = true;
    if (events_) {
      events_->emit(errors::event::crash_loop, {{"reason", reason}});
    }
  };
  h.attempt_failed = [this](const std::vector<WorkerFailure>& f) {
    if (!f.empty()) {
      log_failure(failures_of(f));
    }
  };
  h.stacks_taken = [this](const StackReport& r) { on_stacks(r); };
  h.stall_timeout_changed = [this](std::chrono::milliseconds timeout, const std::string& why) {
    if (events_) {
      events_->emit(
          errors::event::stall_timeout,
          {{"timeout_s", std::chrono::duration<double>(timeout).count()}, {"basis", why}});
    }
  };
  h.unhealthy = [this](const std::string& reason, const std::vector<std::string>& lines) {
    if (events_) {
      events_->emit(errors::event::unhealthy, {{"reason", reason}, {"lines", lines}});
    }
  };
  h.watchdog_expired = [this](const WorkerRanks& r, const TimerExpiry& e) {
    if (events_) {
      events_->watchdog_expired(r.local_rank, r.rank, e.pid, e.scope_id, e.signal);
    }
  };
  return h;
}

std::vector<errors::ProcessFailure> Reporter::failures_of(
    const std::vector<WorkerFailure>& failed) const {
  auto now_counters = errors::read_oom_counters();
  std::vector<errors::ProcessFailure> failures;
  failures.reserve(failed.size());
  for (const auto& f : failed) {
    failures.push_back(to_failure(f, oom_baseline_, now_counters));
  }
  return failures;
}

void Reporter::log_failure(const std::vector<errors::ProcessFailure>& failures) {
  const auto& root = failures[errors::root_cause_index(failures)];
  spdlog::error("failed (exitcode: {}) local_rank: {} (pid: {}) of binary: {}", root.exit_code,
                root.local_rank, root.pid, cfg_.no_python ? cfg_.training_script : cfg_.python);
  spdlog::error("{}", errors::render_failed_ranks(failures, host::host_fqdn()));
}

void Reporter::on_failed(const std::vector<WorkerFailure>& worker_failures) {
  if (worker_failures.empty()) {
    return;
  }
  const auto failures = failures_of(worker_failures);
  log_failure(failures);
  auto box = errors::render_summary(cfg_.training_script, host::host_fqdn(), failures);
  (void)std::fprintf(stderr, "%s\n", box.c_str());
  if (!stacks_.empty()) {
    (void)std::fprintf(stderr, "Stacks of the ranks still running at the failure:\n%s",
                       stacks_.c_str());
  }
  print_import_hint(worker_failures, failures);
  (void)std::fflush(stderr);
  write_parent_error_file(failures[errors::root_cause_index(failures)]);
}

void Reporter::print_import_hint(const std::vector<WorkerFailure>& failed,
                                 const std::vector<errors::ProcessFailure>& failures) {
  const auto& root = failed[errors::root_cause_index(failures)];
  const auto lived = std::chrono::duration_cast<std::chrono::seconds>(root.when - started_);
  for (const auto& line : import_hint(cfg_, env_, EarlyFailure{failures, lived})) {
    (void)std::fprintf(stderr, "%s\n", line.c_str());
  }
}

void Reporter::on_stacks(const StackReport& report) {
  auto lines = errors::render_stack_report(report.groups);
  stacks_.clear();
  for (const auto& line : lines) {
    stacks_ += line + "\n";
  }
  for (const auto& node : report.missing_nodes) {
    stacks_ += node + ": did not answer\n";
  }
  stacks_ += report.nodes > 1 ? "full stacks, on each node:" : "full stacks:";
  for (const auto& f : report.files) {
    stacks_ += " " + f;
  }
  stacks_ += "\n";
  if (!events_) {
    return;
  }
  errors::EventFields groups = errors::EventFields::array();
  for (const auto& g : report.groups) {
    groups.push_back({{"ranks", errors::render_rank_list(g.ranks)}, {"frames", g.frames}});
  }
  events_->emit(report.stall ? errors::event::stall : errors::event::stacks,
                {{"reason", report.reason},
                 {"method", report.method},
                 {"groups", std::move(groups)},
                 {"files", report.files},
                 {"nodes", report.nodes},
                 {"missing_nodes", report.missing_nodes}});
}

void Reporter::write_parent_error_file(const errors::ProcessFailure& root) {
  if (!parent_error_file_) {
    if (!root.record_json.empty()) {
      spdlog::error("no error file defined for parent, to copy child error file ({})",
                    root.error_file);
    }
    return;
  }
  auto record = errors::render_parent_error_file(root);
  if (!stacks_.empty()) {
    record = errors::add_extra_info(record, "stacks", stacks_);
  }
  if (auto ok = errors::write_error_file(*parent_error_file_, record); !ok) {
    spdlog::error("cannot write the agent's error file: {}", ok.error().message);
  }
}

void Reporter::on_exclusion(const rdzv::Exclusion& e, bool self) {
  if (events_) {
    events_->emit(errors::event::excluded, {{"node", e.node},
                                            {"this_node", self},
                                            {"round", e.round},
                                            {"failures", e.failures},
                                            {"reason", e.reason}});
  }
}

void Reporter::on_spare_joined(const rdzv::SpareJoined& s) {
  if (!events_) {
    return;
  }
  auto replaced = errors::EventFields::array();
  for (const auto& r : s.replaced) {
    replaced.push_back({{"node", r.node}, {"why", r.why}});
  }
  errors::EventFields fields = {{"node", s.spare},
                                {"waited_round", s.waited_round},
                                {"round", s.round},
                                {"replaced", std::move(replaced)}};
  if (s.segment >= 0) {
    fields["segment"] = s.segment;
    fields["domain"] = s.domain;
  }
  events_->emit(errors::event::spare_joined, fields);
}

void Reporter::finish(int exit_code) {
  if (!events_) {
    return;
  }
  const char* state = exit_code == util::k_exit_success      ? "SUCCEEDED"
                      : gave_up_                             ? "CRASH_LOOP"
                      : exit_code == util::k_exit_excluded   ? "EXCLUDED"
                      : exit_code > util::k_exit_signal_base ? "STOPPED"
                                                             : "FAILED";
  events_->result(state, exit_code);
}

}  // namespace ddprun::agent
