// rdzv_scale_bench: the simulated-scale rendezvous of issues #5 and #28. N lightweight "nodes"
// (one DynamicRendezvous and one store connection pool each) join round 0 of one c10d-style
// run against one real store, and the time until the last of them holds its group rank is
// reported.
//
//   rdzv_scale_bench [--nodes 64] [--processes 0] [--endpoint HOST:PORT] [--timeout-seconds 60]
//                    [--poll-ms 150] [--jitter-ms 300] [--json]
//                    [--running-seconds S] [--lose-one] [--connect-batch 256]
//                    [--backend c10d|etcd-v3] [--keep-alive-ms 5000] [--last-call-ms 1000]
//
// --processes 0 (the default): every node on one io_context thread, the store in-process on a
// second thread (or given with --endpoint); nothing but the join is timed. --processes P: the
// store in its own process and the nodes spread over P processes (rdzv_scale_procs.hpp), each
// node's connection opened before the start; the report adds the store's peak RSS and CPU,
// with --running-seconds the store's request rate while the round runs (heartbeats, watches),
// and with --lose-one the re-form of the others after node N/2 stops as if its machine died.
// The soft RLIMIT_NOFILE is raised to the hard limit.

#include "ddprun/rdzv/dynamic_rendezvous.hpp"
#include "ddprun/rdzv/store_kv.hpp"
#include "ddprun/store/command.hpp"
#include "ddprun/store/server.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "rdzv_scale_common.hpp"
#include "rdzv_scale_procs.hpp"

namespace {

using namespace ddprun;
using rdzv_scale::Args;
using rdzv_scale::Clock;

struct Outcome {
  std::vector<double> done_ms;  ///< per node that completed, since the start
  int errors = 0;
  std::string first_error;
};

asio::awaitable<void> join_one(std::shared_ptr<rdzv::DynamicRendezvous> r, Clock::time_point t0,
                               Outcome& out) {
  auto result = co_await r->next_round();
  if (result) {
    out.done_ms.push_back(rdzv_scale::ms_since(t0));
  } else if (out.errors++ == 0) {
    out.first_error = result.error().message;
  }
  r->stop();
}

Outcome run(const Args& a, const std::string& host, std::uint16_t port) {
  asio::io_context io;
  util::SystemClock clock;
  store::ClientOptions options;
  options.host = host;
  options.port = port;
  options.op_timeout = std::chrono::milliseconds(static_cast<long>(a.timeout_seconds * 1000));
  std::vector<std::unique_ptr<rdzv::StoreKv>> kvs;
  std::vector<std::shared_ptr<rdzv::DynamicRendezvous>> nodes;
  for (int i = 0; i < a.nodes; ++i) {
    kvs.push_back(std::make_unique<rdzv::StoreKv>(io, options));
    nodes.push_back(rdzv::DynamicRendezvous::create(io, *kvs.back(), rdzv_scale::settings_of(a),
                                                    rdzv_scale::node(i), clock));
  }
  Outcome out;
  const auto t0 = Clock::now();
  for (auto& n : nodes) {
    asio::co_spawn(io, join_one(n, t0, out), asio::detached);
  }
  io.run_for(std::chrono::milliseconds(static_cast<long>(a.timeout_seconds * 1000) + 5000));
  return out;
}

void report(const Args& a, const Outcome& out) {
  const auto [last, median] = rdzv_scale::summarize(out.done_ms);
  const auto completed = out.done_ms.size();
  if (a.json) {
    std::cout
        << fmt::format(
               R"({{"nodes": {}, "completed": {}, "errors": {}, "last_ms": {:.1f}, "median_ms": {:.1f}}})",
               a.nodes, completed, out.errors, last, median)
        << "\n";
  } else {
    std::cout << fmt::format("nodes={} completed={} errors={} last={:.1f} ms median={:.1f} ms\n",
                             a.nodes, completed, out.errors, last, median);
  }
  if (!out.first_error.empty()) {
    std::cerr << "first error: " << out.first_error << "\n";
  }
}

int bench_main(int argc, char** argv) {
  Args a;
  CLI::App app{"simulated-scale c10d rendezvous against one store"};
  app.add_option("--nodes", a.nodes)->check(CLI::Range(1, 1 << 20));
  app.add_option("--processes", a.processes, "node processes; 0: nodes and store in this one")
      ->check(CLI::Range(0, 256));
  app.add_option("--backend", a.backend, "with --processes: c10d (a store process) or etcd-v3")
      ->check(CLI::IsMember({"c10d", "etcd-v3"}));
  app.add_option("--endpoint", a.endpoint,
                 "HOST:PORT of a running store (default in-process); etcd-v3: the members");
  app.add_option("--timeout-seconds", a.timeout_seconds)->check(CLI::PositiveNumber);
  app.add_option("--poll-ms", a.poll_ms)->check(CLI::Range(1, 60000));
  app.add_option("--jitter-ms", a.jitter_ms)->check(CLI::Range(0, 60000));
  app.add_option("--keep-alive-ms", a.keep_alive_ms, "keep_alive_interval (x3: the bound)")
      ->check(CLI::Range(50, 600000));
  app.add_option("--last-call-ms", a.last_call_ms,
                 "last_call_timeout; matters with --lose-one (the nodes then run N-1:N)")
      ->check(CLI::Range(0, 600000));
  app.add_option("--running-seconds", a.running_seconds,
                 "with --processes: the running round's store load over this long")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--lose-one", a.lose_one, "with --processes: lose node N/2, time the re-form");
  app.add_option("--connect-batch", a.connect_batch,
                 "with --processes: connections each process opens at once before the start")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--times-file", a.times_file,
                 "with --processes: write every node's join time (ms) here, one a line");
  app.add_flag("--json", a.json);
  CLI11_PARSE(app, argc, argv);
  rdzv_scale::raise_nofile();
  // The nodes' warnings go to stderr with the phase lines: stdout carries the results only.
  spdlog::set_default_logger(spdlog::stderr_logger_st("rdzv_scale_bench"));
  spdlog::set_level(spdlog::level::warn);
  if (auto wrong = rdzv_scale::misuse(a)) {
    std::cerr << "rdzv_scale_bench: " << *wrong << "\n";
    return 2;
  }
  if (a.processes > 0) {
    return rdzv_scale::run_processes(a);
  }

  asio::io_context server_io;
  std::optional<store::Server> server;
  std::thread server_thread;
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  if (a.endpoint.empty()) {
    server.emplace(server_io);
    if (auto ok = server->listen(host, 0); !ok) {
      std::cerr << ok.error().message << "\n";
      return 1;
    }
    port = server->port();
    server_thread = std::thread([&] { server_io.run(); });
  } else {
    auto ep = store::parse_endpoint(a.endpoint);
    if (!ep) {
      std::cerr << ep.error().message << "\n";
      return 2;
    }
    host = ep->first;
    port = ep->second;
  }
  Outcome out = run(a, host, port);
  report(a, out);
  if (server_thread.joinable()) {
    asio::post(server_io, [&] { server->stop(); });
    server_thread.join();
  }
  return out.done_ms.size() == static_cast<std::size_t>(a.nodes) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return bench_main(argc, argv);
  } catch (const std::exception& e) {  // e.g. a thread or socket failure: one line, no abort
    std::cerr << "rdzv_scale_bench: internal error: " << e.what() << "\n";
    return 1;
  }
}
