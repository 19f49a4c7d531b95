// rdzv_scale_bench: the simulated-scale rendezvous of issue #5. N lightweight "nodes" (one
// DynamicRendezvous and one store connection pool each, all on one io_context thread) join
// round 0 of one c10d-style run against one real store, and the time until the last of them
// holds its group rank is reported. The store runs in-process on a second thread, or is
// given with --endpoint (e.g. a `ddprun store serve` in another process).
//
//   rdzv_scale_bench [--nodes 64] [--endpoint HOST:PORT] [--timeout-seconds 60]
//                    [--poll-ms 150] [--jitter-ms 300] [--json]
//
// Nothing but the rendezvous runs: no workers, no heartbeat traffic beyond what the round
// itself causes. The soft RLIMIT_NOFILE is raised to the hard limit.

#include "ddprun/rdzv/dynamic_rendezvous.hpp"
#include "ddprun/rdzv/store_kv.hpp"
#include "ddprun/store/command.hpp"
#include "ddprun/store/server.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace {

using namespace ddprun;
using Clock = std::chrono::steady_clock;

constexpr int k_addr_block = 250;  ///< nodes per simulated /24, for distinct addresses

struct Args {
  int nodes = 64;
  std::string endpoint;
  double timeout_seconds = 60;
  int poll_ms = 150;
  int jitter_ms = 300;
  bool json = false;
};

struct Outcome {
  std::vector<double> done_ms;  ///< per node that completed, since the start
  int errors = 0;
  std::string first_error;
};

void raise_nofile() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
}

rdzv::NodeDesc node(int i) {
  rdzv::NodeDesc n;
  n.addr = fmt::format("10.{}.{}.{}", i / (k_addr_block * k_addr_block),
                       (i / k_addr_block) % k_addr_block, 1 + i % k_addr_block);
  n.pid = 1000 + i;
  n.node_index = i;
  return n;
}

rdzv::RdzvSettings settings_of(const Args& a) {
  rdzv::RdzvSettings s;
  s.run_id = "scale-bench";
  s.min_nodes = a.nodes;
  s.max_nodes = a.nodes;
  s.join_timeout = std::chrono::milliseconds(static_cast<long>(a.timeout_seconds * 1000));
  s.poll_interval = std::chrono::milliseconds(a.poll_ms);
  s.first_round_jitter = std::chrono::milliseconds(a.jitter_ms);
  return s;
}

asio::awaitable<void> join_one(std::shared_ptr<rdzv::DynamicRendezvous> r, Clock::time_point t0,
                               Outcome& out) {
  auto result = co_await r->next_round();
  if (result) {
    out.done_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
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
    nodes.push_back(
        rdzv::DynamicRendezvous::create(io, *kvs.back(), settings_of(a), node(i), clock));
  }
  Outcome out;
  const auto t0 = Clock::now();
  for (auto& n : nodes) {
    asio::co_spawn(io, join_one(n, t0, out), asio::detached);
  }
  io.run_for(std::chrono::milliseconds(static_cast<long>(a.timeout_seconds * 1000) + 5000));
  return out;
}

void report(const Args& a, Outcome& out) {
  std::sort(out.done_ms.begin(), out.done_ms.end());
  const double last = out.done_ms.empty() ? 0 : out.done_ms.back();
  const double median = out.done_ms.empty() ? 0 : out.done_ms[out.done_ms.size() / 2];
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
  app.add_option("--endpoint", a.endpoint, "HOST:PORT of a running store (default in-process)");
  app.add_option("--timeout-seconds", a.timeout_seconds)->check(CLI::PositiveNumber);
  app.add_option("--poll-ms", a.poll_ms)->check(CLI::Range(1, 60000));
  app.add_option("--jitter-ms", a.jitter_ms)->check(CLI::Range(0, 60000));
  app.add_flag("--json", a.json);
  CLI11_PARSE(app, argc, argv);
  raise_nofile();
  spdlog::set_level(spdlog::level::warn);

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
