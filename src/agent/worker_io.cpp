#include "ddprun/agent/worker_io.hpp"

#include "ddprun/agent/health.hpp"
#include "ddprun/agent/stack_capture.hpp"
#include "ddprun/agent/worker_env.hpp"
#include "ddprun/output/log_dir.hpp"
#include "ddprun/output/router.hpp"
#include "ddprun/output/stdio_plan.hpp"
#include "ddprun/util/fatal.hpp"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <map>

namespace ddprun::agent {

namespace {

constexpr std::size_t k_stderr_tail_lines = 10;
constexpr std::chrono::milliseconds k_console_flush_wait{2000};

/// How the streams pass the agent, beyond the -r/-t/--local-ranks-filter destinations.
struct Routing {
  /// Python workers' stacks come from faulthandler's dump on stderr, which the agent must see.
  bool read_stderr = false;
  /// --stall-timeout: every stream goes through the agent, which notes when output arrives.
  bool watch_output = false;
  /// --line-output: the console streams go through the agent, which writes whole lines.
  bool lines_out = false;
  bool lines_err = false;
};

/// torchrun's log files and stream routing behind the supervisor's WorkerIo seam.
class RouterIo final : public WorkerIo {
 public:
  RouterIo(asio::io_context& ctx, const config::OutputPlan& cfg, std::string role,
           std::string run_dir, Routing routing, output::RouterOptions options)
      : ctx_(ctx),
        cfg_(cfg),
        role_(std::move(role)),
        run_dir_(std::move(run_dir)),
        routing_(routing),
        options_clock_(options.clock),
        router_(ctx, std::move(options)) {}

  Result<void> begin_attempt(int attempt, int nproc) override {
    router_.reset();
    attempt_ = attempt;
    nproc_ = nproc;
    return output::prepare_attempt_dir(run_dir_, attempt, nproc);
  }

  std::string error_file(int local_rank) const override {
    return output::log_paths(run_dir_, attempt_, local_rank).error_file;
  }

  Result<ChildFds> open(const WorkerRanks& ranks) override {
    auto plan = output::decide_stdio(cfg_.redirects, cfg_.tee, cfg_.local_ranks_filter,
                                     ranks.local_rank, !run_dir_.empty());
    if (routing_.watch_output) {
      plan = output::watched(plan);  // same destinations, but the agent sees every byte
    }
    if ((routing_.read_stderr || routing_.lines_err) && plan.err == output::Route::inherit) {
      plan.err = output::Route::pass_through;  // same console, but the agent sees the dump
    }
    if (routing_.lines_out && plan.out == output::Route::inherit) {
      plan.out = output::Route::pass_through;  // same console, whole lines
    }
    auto stdio = router_.prepare({role_, ranks.rank, ranks.local_rank}, plan,
                                 output::log_paths(run_dir_, attempt_, ranks.local_rank));
    if (!stdio) {
      return stdio.error();
    }
    return ChildFds{stdio->out_fd, stdio->err_fd};
  }

  void spawned(int local_rank, pid_t pid) override { router_.on_spawned(local_rank, pid); }

  asio::awaitable<void> drain(std::chrono::milliseconds max_wait) override {
    if (!router_.drained()) {
      // The router calls back at EOF or at max_wait; the timer (shared with the callback,
      // which may run after this frame is gone) is only a backstop.
      auto timer = std::make_shared<asio::steady_timer>(ctx_, max_wait + std::chrono::seconds(1));
      router_.async_wait_drained(max_wait, [timer] { timer->cancel(); });
      boost::system::error_code ec;
      co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    co_await flush_console(std::min(max_wait, k_console_flush_wait));
    report_console_losses();
  }

  /// Gives a slow console a bounded moment to take what is queued for it.
  asio::awaitable<void> flush_console(std::chrono::milliseconds max_wait) {
    asio::steady_timer timer(ctx_);
    const util::Clock& clock = *options_clock_;
    auto deadline = clock.now() + max_wait;
    while (router_.console_buffered_bytes() > 0 && clock.now() < deadline) {
      timer.expires_after(std::chrono::milliseconds(10));
      boost::system::error_code ec;
      co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
  }

  /// Says, once per attempt, how much worker output the console could not take. The log
  /// files hold everything.
  void report_console_losses() {
    for (int lr = 0; lr < nproc_; ++lr) {
      auto dropped = router_.console_dropped_bytes(lr);
      if (dropped > reported_drops_[lr]) {
        spdlog::warn(
            "the console could not keep up: {} bytes of output from local rank {} were "
            "not shown (the log files under {} are complete)",
            dropped - reported_drops_[lr], lr, run_dir_.empty() ? "<none>" : run_dir_);
        reported_drops_[lr] = dropped;
      }
    }
    if (auto queued = router_.console_buffered_bytes(); queued > 0) {
      spdlog::warn("{} bytes of worker output are still queued for a console that is not reading",
                   queued);
    }
  }

  std::vector<std::string> stderr_tail(int local_rank) const override {
    return router_.tail_lines(local_rank, k_stderr_tail_lines);
  }

  std::vector<std::string> stderr_lines(int local_rank, std::size_t n) const override {
    return router_.tail_lines(local_rank, n);
  }

  std::string run_dir() const override { return run_dir_; }

  util::SteadyTime last_output() const override { return router_.last_output(); }

 private:
  asio::io_context& ctx_;
  const config::OutputPlan& cfg_;
  std::string role_;  ///< the group's role, in output prefixes
  std::string run_dir_;
  Routing routing_;
  const util::Clock* options_clock_;  ///< the router's clock: also bounds flush_console
  output::OutputRouter router_;
  int attempt_ = 0;
  int nproc_ = 0;
  std::map<int, std::uint64_t> reported_drops_;
};

/// --line-output auto: a console that is a terminal stays the workers' own (progress bars,
/// colours); a file or pipe gets whole lines from the agent.
bool lines_for(config::LineOutput mode, int console_fd) {
  return mode == config::LineOutput::on ||
         (mode == config::LineOutput::automatic && ::isatty(console_fd) == 0);
}

Routing make_routing(const config::WorkerCommand& command, const config::SupervisorOptions& cfg,
                     config::LineOutput lines, const util::Env& env) {
  // The stall watchdog and the health endpoint count output as progress, so they need the
  // streams to pass through the agent (the console is unchanged).
  const bool watch_output =
      cfg.stall_timeout.count() > 0 || env.has(std::string(k_health_port_env));
  return Routing{takes_faulthandler_dumps(command, cfg, env), watch_output,
                 lines_for(lines, STDOUT_FILENO), lines_for(lines, STDERR_FILENO)};
}

}  // namespace

std::unique_ptr<WorkerIo> make_worker_io(asio::io_context& ctx, const config::OutputPlan& cfg,
                                         const config::WorkerGroup& group,
                                         const config::RendezvousPlan& rdzv,
                                         const config::SupervisorOptions& options,
                                         const config::WorkerCommand& command, const util::Env& env,
                                         const util::Clock& clock) {
  auto routing = make_routing(command, options, cfg.line_output, env);
  spdlog::debug("workers' lines through the launcher: stdout {}, stderr {}", routing.lines_out,
                routing.lines_err);
  auto run_dir = output::make_run_dir(cfg.log_dir, rdzv.rdzv_id, output::temp_root(env));
  if (!run_dir && cfg.log_dir.empty()) {
    throw Fatal(run_dir.error());  // the temporary directory under TMPDIR
  }
  if (!run_dir) {
    throw Fatal(
        make_error(run_dir.error().code, cfg.log_dir_source + " " + run_dir.error().message));
  }
  if (!run_dir->empty()) {
    spdlog::info("log directory set to: {}", *run_dir);
  }
  output::RouterOptions router_options;
  router_options.clock = &clock;
  if (routing.read_stderr) {
    router_options.stderr_tail_lines = k_stack_dump_lines;
  }
  if (auto prefix = env.get_nonempty(std::string(output::k_prefix_template_env))) {
    router_options.prefix_template = *prefix;
  }
  return std::make_unique<RouterIo>(ctx, cfg, group.role, *run_dir, routing,
                                    std::move(router_options));
}

}  // namespace ddprun::agent
