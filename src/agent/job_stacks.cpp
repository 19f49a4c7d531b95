#include "ddprun/agent/job_stacks.hpp"

#include "ddprun/agent/stack_capture.hpp"
#include "ddprun/host/facts.hpp"

#include <spdlog/spdlog.h>

namespace ddprun::agent {

namespace {

errors::NodeStacks node_stacks(const StackReport& r) {
  return errors::NodeStacks{host::host_fqdn(), r.method, r.groups, r.files};
}

/// The report on stderr: one line saying why and where the full stacks are, one per group,
/// and the nodes that did not answer.
void log_stack_report(const StackReport& r) {
  std::string where = "<none>";
  if (!r.files.empty()) {
    const auto dir = r.files.front().substr(0, r.files.front().rfind('/'));
    where = r.files.size() == 1 ? r.files.front()
                                : dir.substr(0, dir.rfind('/')) + "/<local_rank>/stacks.txt";
  }
  const std::string nodes =
      r.nodes > 1 ? " on " + std::to_string(r.nodes) + " nodes" : std::string();
  spdlog::warn("stacks of the ranks still running{} [{}] ({}; full stacks in {}{}):", nodes,
               r.reason, r.method, where, r.nodes > 1 ? " on each node" : "");
  for (const auto& line : errors::render_stack_report(r.groups)) {
    spdlog::warn("  {}", line);
  }
  for (const auto& node : r.missing_nodes) {
    spdlog::warn("  {}: did not answer (its stacks are missing from this report)", node);
  }
}

}  // namespace

asio::awaitable<void> JobStacks::take(std::vector<StackTarget> targets, std::string reason,
                                      bool stall) {
  if (!can_take()) {
    co_return;
  }
  const bool asked_others = co_await peers_->request_stacks(reason);
  StackReport report;
  if (!targets.empty()) {
    report = co_await capture_->capture(
        std::move(targets), reason, asked_others ? k_freeze_hold : std::chrono::milliseconds(0));
  }
  mine_ = node_stacks(report);
  co_await peers_->answer_stacks(*mine_);
  auto peers = co_await peers_->collect_stacks(k_peer_stacks_bound);
  if (!peers.answers.empty() || !peers.missing.empty()) {
    peers.answers.push_back(*mine_);
    report.groups = errors::merge_stack_groups(peers.answers);
    report.nodes = static_cast<int>(peers.answers.size());
    report.missing_nodes = std::move(peers.missing);
  }
  report.reason = std::move(reason);
  report.stall = stall;
  if (report.groups.empty() && report.missing_nodes.empty()) {
    co_return;  // nothing was running anywhere
  }
  log_stack_report(report);
  if (on_taken_) {
    on_taken_(report);
  }
}

asio::awaitable<void> JobStacks::answer(std::vector<StackTarget> targets, const std::string& role) {
  const auto reason = peers_->stacks_request();
  if (!mine_) {
    StackReport report;
    if (capture_ != nullptr && !targets.empty()) {
      report = co_await capture_->capture(std::move(targets), reason + " (asked by another node)",
                                          k_freeze_hold);
      spdlog::warn("[{}] another node asked for every rank's stack ({}): took {} rank(s) with {}",
                   role, reason, report.files.size(), report.method);
      if (on_taken_) {
        on_taken_(report);
      }
    }
    mine_ = node_stacks(report);
  }
  co_await peers_->answer_stacks(*mine_);
}

}  // namespace ddprun::agent
