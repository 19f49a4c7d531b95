// store_barrier_bench: N concurrent store connections (our async Client, one io_context thread)
// meet at a store barrier. Each connection does add(K/count, 1); the one that sees N sets
// K/done, all others block in get(K/done). Reports the time from the first add to the last
// wake, and, given --server-pid, the server's VmRSS growth per idle connection (read before
// connecting and after all N connections completed one round trip and sit idle).
//
//   store_barrier_bench [--connections 1000] [--endpoint HOST:PORT] [--server-pid PID]
//                       [--timeout-seconds 60] [--connect-parallel 512] [--json]
//
// Without --endpoint the server runs in-process on a second thread (no RSS figure then).
// The soft RLIMIT_NOFILE is raised to the hard limit; N + k_reserved_fds must fit under it.

#include "ddprun/store/client.hpp"
#include "ddprun/store/command.hpp"
#include "ddprun/store/server.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

namespace {

using namespace ddprun;
using namespace ddprun::store;
using Clock = std::chrono::steady_clock;

constexpr std::size_t k_reserved_fds = 64;
constexpr double k_kib = 1024.0;
/// Pause after the warm-up round trip so the server's lazy allocations have settled.
constexpr auto k_settle = std::chrono::milliseconds(500);

struct Args {
  std::size_t connections = 1000;
  std::string endpoint;
  long server_pid = 0;
  double timeout_seconds = 60;
  std::size_t connect_parallel = 512;
  bool json = false;
};

struct Run {
  std::vector<std::unique_ptr<Client>> clients;
  std::size_t next = 0;
  std::size_t done = 0;
  std::size_t errors = 0;
  std::string first_error;
  Clock::time_point first_add{};
  std::vector<Clock::time_point> wakes;

  void fail(const Error& e) {
    if (errors++ == 0) {
      first_error = e.message;
    }
  }
};

/// Soft RLIMIT_NOFILE raised to the hard limit; returns the soft limit in force.
std::size_t raise_open_file_limit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) {
    return 0;
  }
  if (lim.rlim_cur < lim.rlim_max) {
    rlimit raised = lim;
    raised.rlim_cur = lim.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) {
      lim = raised;
    }
  }
  return lim.rlim_cur == RLIM_INFINITY ? SIZE_MAX : static_cast<std::size_t>(lim.rlim_cur);
}

/// VmRSS of /proc/<pid>/status in KiB, nullopt when unreadable.
std::optional<long> vm_rss_kib(long pid) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  std::string word;
  while (status >> word) {
    if (word == "VmRSS:") {
      long kib = 0;
      status >> kib;
      return kib;
    }
  }
  return std::nullopt;
}

/// utime + stime of /proc/<pid>/stat in seconds (all threads); nullopt when unreadable.
std::optional<double> cpu_seconds(long pid) {
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos) {
    return std::nullopt;
  }
  std::istringstream fields(text.substr(close + 1));
  std::string field;
  constexpr int k_utime_field = 12;  // 1-based fields after "pid (comm)": state is the first
  double ticks = 0;
  for (int i = 1; i <= k_utime_field + 1 && fields >> field; ++i) {
    if (i >= k_utime_field) {
      ticks += std::stod(field);
    }
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

/// One of `connect_parallel` lanes: connects clients and does one CHECK round trip each, so the
/// server has accepted and served every connection before the RSS is read.
asio::awaitable<void> connect_lane(Run& run) {
  while (run.next < run.clients.size()) {
    Client& c = *run.clients[run.next++];
    auto ok = co_await c.check(std::vector<std::string>(1, "/barrier_bench/warmup"));
    if (!ok) {
      run.fail(ok.error());
    }
    ++run.done;
  }
}

asio::awaitable<void> barrier_member(Run& run, Client& c, std::size_t i, const std::string& ns) {
  const auto n = static_cast<std::int64_t>(run.clients.size());
  auto count = co_await c.add(ns + "count", 1);
  if (!count) {
    run.fail(count.error());
  } else if (*count == n) {
    if (auto set = co_await c.set(ns + "done", "1"); !set) {
      run.fail(set.error());
    }
  } else if (auto got = co_await c.get(ns + "done"); !got) {
    run.fail(got.error());
  }
  run.wakes[i] = Clock::now();
  ++run.done;
}

/// Runs io until `run.done` reaches the client count or the deadline passes (then stops io).
bool run_until_done(asio::io_context& io, Run& run, Clock::time_point deadline) {
  while (run.done < run.clients.size() && Clock::now() < deadline) {
    io.restart();
    io.run_for(std::chrono::milliseconds(50));
  }
  return run.done == run.clients.size();
}

ClientOptions client_options(const std::string& host, std::uint16_t port, const Args& a) {
  ClientOptions o;
  o.host = host;
  o.port = port;
  const auto budget = std::chrono::milliseconds(static_cast<long>(a.timeout_seconds * 1000));
  o.connect_timeout = budget;
  o.op_timeout = budget;
  o.dialect = Dialect::d0;
  return o;
}

struct Report {
  double connect_s = 0;
  double barrier_s = 0;
  double median_wake_s = 0;
  std::optional<long> rss_before_kib;
  std::optional<long> rss_after_kib;
  std::optional<double> server_cpu_s;  ///< server CPU time during the barrier phase
  double client_cpu_s = 0;             ///< this process's CPU time during the barrier phase
};

double own_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto sec = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

void print_report(const Args& a, const Run& run, const Report& r) {
  std::string rss = "null";
  std::string per_conn = "null";
  const std::string server_cpu = r.server_cpu_s ? fmt::format("{:.3f}", *r.server_cpu_s) : "null";
  if (r.rss_before_kib && r.rss_after_kib) {
    rss = fmt::format("{}", *r.rss_after_kib - *r.rss_before_kib);
    per_conn = fmt::format("{:.0f}", static_cast<double>(*r.rss_after_kib - *r.rss_before_kib) *
                                         k_kib / static_cast<double>(a.connections));
  }
  if (a.json) {
    std::cout << fmt::format(
        "{{\"connections\": {}, \"errors\": {}, \"connect_s\": {:.3f}, \"barrier_s\": {:.3f}, "
        "\"median_wake_s\": {:.3f}, \"rss_growth_kib\": {}, \"rss_bytes_per_conn\": {}, "
        "\"server_cpu_s\": {}, "
        "\"client_cpu_s\": {:.3f}}}\n",
        a.connections, run.errors, r.connect_s, r.barrier_s, r.median_wake_s, rss, per_conn,
        server_cpu, r.client_cpu_s);
  } else {
    std::cout << fmt::format(
        "connections={} errors={} connect={:.3f}s barrier={:.3f}s median_wake={:.3f}s "
        "rss_growth={}KiB rss_per_conn={}B server_cpu={}s client_cpu={:.3f}s\n",
        a.connections, run.errors, r.connect_s, r.barrier_s, r.median_wake_s, rss, per_conn,
        server_cpu, r.client_cpu_s);
  }
  if (run.errors > 0) {
    std::cerr << "store_barrier_bench: first error: " << run.first_error << "\n";
  }
}

/// Every client adds, the last one sets "done", the others wait for it; fills the timings.
bool barrier_phase(asio::io_context& io, Run& run, const Args& a, Clock::time_point deadline,
                   Report& r) {
  run.done = 0;
  run.wakes.assign(a.connections, Clock::time_point{});
  const std::string ns =
      fmt::format("/barrier_bench/{}/{}/", getpid(), Clock::now().time_since_epoch().count());
  const auto cpu0 = a.server_pid > 0 ? cpu_seconds(a.server_pid) : std::nullopt;
  const double own0 = own_cpu_seconds();
  run.first_add = Clock::now();
  for (std::size_t i = 0; i < a.connections; ++i) {
    asio::co_spawn(io, barrier_member(run, *run.clients[i], i, ns), asio::detached);
  }
  const bool ok = run_until_done(io, run, deadline);
  r.client_cpu_s = own_cpu_seconds() - own0;
  const auto cpu1 = a.server_pid > 0 ? cpu_seconds(a.server_pid) : std::nullopt;
  if (cpu0 && cpu1) {
    r.server_cpu_s = *cpu1 - *cpu0;
  }
  if (!ok) {
    return false;
  }
  auto wakes = run.wakes;
  std::sort(wakes.begin(), wakes.end());
  auto since = [&](Clock::time_point t) {
    return std::chrono::duration<double>(t - run.first_add).count();
  };
  r.barrier_s = since(wakes.back());
  r.median_wake_s = since(wakes[wakes.size() / 2]);
  return true;
}

int bench(const Args& a, const std::string& host, std::uint16_t port) {
  asio::io_context io(1);
  Run run;
  for (std::size_t i = 0; i < a.connections; ++i) {
    run.clients.push_back(std::make_unique<Client>(io, client_options(host, port, a)));
  }
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(a.timeout_seconds));
  Report r;
  if (a.server_pid > 0) {
    r.rss_before_kib = vm_rss_kib(a.server_pid);
  }
  const auto t_connect = Clock::now();
  for (std::size_t i = 0; i < std::min(a.connect_parallel, a.connections); ++i) {
    asio::co_spawn(io, connect_lane(run), asio::detached);
  }
  bool ok = run_until_done(io, run, deadline);
  r.connect_s = std::chrono::duration<double>(Clock::now() - t_connect).count();
  std::this_thread::sleep_for(k_settle);
  if (a.server_pid > 0) {
    r.rss_after_kib = vm_rss_kib(a.server_pid);
  }
  if (ok && run.errors == 0) {
    ok = barrier_phase(io, run, a, deadline, r);
  }
  if (!ok) {
    run.fail(make_error(ErrorCode::timeout,
                        fmt::format("{} of {} connections finished within --timeout-seconds {}",
                                    run.done, a.connections, a.timeout_seconds)));
  }
  for (auto& c : run.clients) {
    c->close();
  }
  print_report(a, run, r);
  return run.errors == 0 ? 0 : 1;
}

int run_main(const Args& a) {
  const std::size_t limit = raise_open_file_limit();
  if (a.connections == 0 || a.connections + k_reserved_fds > limit) {
    std::cerr << fmt::format(
        "store_barrier_bench: --connections {}: expected 1..{} (open-file limit {} less {})\n",
        a.connections, limit > k_reserved_fds ? limit - k_reserved_fds : 0, limit, k_reserved_fds);
    return 2;
  }
  if (!a.endpoint.empty()) {
    auto ep = parse_endpoint(a.endpoint);
    if (!ep) {
      std::cerr << "store_barrier_bench: " << ep.error().message << "\n";
      return 2;
    }
    return bench(a, ep->first, ep->second);
  }
  asio::io_context server_io(1);
  Server server(server_io);
  if (auto r = server.listen("127.0.0.1", 0); !r) {
    std::cerr << "store_barrier_bench: " << r.error().message << "\n";
    return 1;
  }
  std::thread server_thread([&] { server_io.run(); });
  const int rc = bench(a, "127.0.0.1", server.port());
  asio::post(server_io, [&] { server.stop(); });
  server_thread.join();
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    CLI::App app("store_barrier_bench: N-way store barrier over N connections");
    Args a;
    app.add_option("--connections", a.connections)->capture_default_str();
    app.add_option("--endpoint", a.endpoint, "HOST:PORT (default: in-process server)");
    app.add_option("--server-pid", a.server_pid, "server process whose VmRSS growth to report");
    app.add_option("--timeout-seconds", a.timeout_seconds, "bound on the whole run")
        ->capture_default_str();
    app.add_option("--connect-parallel", a.connect_parallel, "connections opened at once")
        ->capture_default_str();
    app.add_flag("--json", a.json, "one JSON object instead of key=value");
    CLI11_PARSE(app, argc, argv);
    return run_main(a);
  } catch (const std::exception& e) {  // e.g. a thread or socket failure: one line, no abort
    (void)std::fprintf(stderr, "store_barrier_bench: internal error: %s\n", e.what());
    return 1;
  }
}
