// The parent of the multi-process rdzv_scale_bench: forks the store process and the node
// processes (rdzv_scale_children.hpp has their line protocol), starts every node at one
// instant, and gathers the figures: join times, the store host's request rate while the round
// runs (heartbeats and watches), the re-form after a lost node, the store's peak RSS and CPU.
// Every wait is bounded by --timeout-seconds; children die with the parent (PDEATHSIG).

#include "rdzv_scale_procs.hpp"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <deque>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include "rdzv_scale_children.hpp"

namespace rdzv_scale {

namespace {

struct Child {
  pid_t pid = -1;
  int to = -1;    ///< its control pipe
  int from = -1;  ///< its answers
  std::string pending;
};

/// Every child started; those still running are killed when this goes away.
class Children {
 public:
  Children() = default;
  Children(const Children&) = delete;
  Children& operator=(const Children&) = delete;
  ~Children() {
    for (auto& c : all_) {
      ::close(c.to);
      ::close(c.from);
      if (c.pid > 0) {
        ::kill(c.pid, SIGKILL);
        ::waitpid(c.pid, nullptr, 0);
      }
    }
  }

  /// Forks a child that runs `body(control_in, control_out)` and exits with its status.
  Child& spawn(const std::function<int(int, int)>& body) {
    int down[2];
    int up[2];
    if (::pipe(down) != 0 || ::pipe(up) != 0) {
      throw std::runtime_error("pipe failed");
    }
    std::cout.flush();  // else the child would print the parent's buffered output again
    const pid_t pid = ::fork();
    if (pid < 0) {
      throw std::runtime_error("fork failed");
    }
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      for (const auto& c : all_) {  // the earlier children's pipes are not this one's
        ::close(c.to);
        ::close(c.from);
      }
      ::close(down[1]);
      ::close(up[0]);
      ::_exit(body(down[0], up[1]));
    }
    ::close(down[0]);
    ::close(up[1]);
    all_.push_back(Child{pid, down[1], up[0], {}});
    return all_.back();
  }

  /// Waits for a child that was told to quit; true when it exited 0.
  static bool reap(Child& c) {
    int status = 0;
    const bool ok =
        ::waitpid(c.pid, &status, 0) == c.pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    c.pid = -1;
    return ok;
  }

 private:
  std::deque<Child> all_;  ///< a deque: the references spawn() returned stay valid
};

void send(const Child& c, const std::string& text) {
  const std::string line = text + "\n";
  if (::write(c.to, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    throw std::runtime_error("a child's control pipe is closed");
  }
}

/// The child's next line before `deadline`, or nullopt (timeout, or it exited).
std::optional<std::string> read_line(Child& c, Clock::time_point deadline) {
  while (true) {
    if (auto nl = c.pending.find('\n'); nl != std::string::npos) {
      std::string line = c.pending.substr(0, nl);
      c.pending.erase(0, nl + 1);
      return line;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd p{c.from, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
      return std::nullopt;
    }
    char buf[65536];
    const auto n = ::read(c.from, buf, sizeof buf);
    if (n <= 0) {
      return std::nullopt;
    }
    c.pending.append(buf, static_cast<std::size_t>(n));
  }
}

/// The words after `verb` in the child's next line; throws naming what did not come.
std::istringstream expect(Child& c, const std::string& verb, Clock::time_point deadline) {
  auto line = read_line(c, deadline);
  if (!line || line->rfind(verb + " ", 0) != 0) {
    throw std::runtime_error("child " + std::to_string(c.pid) + ": no \"" + verb +
                             "\" line before the timeout" + (line ? " (got: " + *line + ")" : ""));
  }
  return std::istringstream(line->substr(verb.size() + 1));
}

struct StoreStats {
  std::uint64_t requests = 0;
  std::uint64_t connections = 0;
  std::uint64_t peak_rss_kib = 0;
  std::uint64_t cpu_ms = 0;
};

StoreStats ask_stats(Child& store, const std::string& verb, Clock::time_point deadline) {
  send(store, verb);
  auto words = expect(store, "stats", deadline);
  StoreStats s;
  words >> s.requests >> s.connections >> s.peak_rss_kib >> s.cpu_ms;
  return s;
}

/// Times (ms) and errors gathered from every node process's answer `verb`.
struct Gathered {
  std::vector<double> ms;
  int errors = 0;
  int extra = 0;  ///< "reformed": rounds that ended before the loss
};

Gathered gather(std::vector<Child*>& nodes, const std::string& verb, Clock::time_point deadline) {
  Gathered g;
  for (auto* c : nodes) {
    auto words = expect(*c, verb, deadline);
    int errors = 0;
    words >> errors;
    g.errors += errors;
    if (int extra = 0; verb == "reformed" && words >> extra) {
      g.extra += extra;
    }
    for (double ms = 0; words >> ms;) {
      g.ms.push_back(ms);
    }
  }
  return g;
}

/// A phase boundary on stderr, for a caller that samples the store's own counters between
/// phases (bench/rdzv_scale_etcd.py reads etcd's): "rdzv_scale_bench: phase NAME".
void mark(const char* name) { std::cerr << "rdzv_scale_bench: phase " << name << std::endl; }

std::int64_t ns_of(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

struct Report {
  Gathered joined;
  double connect_ms = 0;  ///< the slowest process's warm-up
  double heartbeat_rps = 0;
  std::uint64_t joined_connections = 0;  ///< open at the store once every node joined
  std::optional<Gathered> reformed;
  StoreStats store;
};

void print(const Args& a, const Report& r) {
  const auto join = summarize(r.joined.ms);
  std::string extra = fmt::format(R"(, "backend": "{}", "processes": {}, "connect_ms": {:.1f})",
                                  a.backend, a.processes, r.connect_ms);
  if (a.backend == "c10d") {
    extra += fmt::format(
        R"(, "store_peak_rss_mib": {:.1f}, "store_cpu_s": {:.2f}, "store_connections": {})",
        static_cast<double>(r.store.peak_rss_kib) / 1024,
        static_cast<double>(r.store.cpu_ms) / 1000, r.joined_connections);
  }
  if (a.running_seconds > 0) {
    extra += fmt::format(R"(, "running_s": {:.1f}, "heartbeat_rps": {:.1f})", a.running_seconds,
                         r.heartbeat_rps);
  }
  if (r.reformed) {
    const auto re = summarize(r.reformed->ms);
    extra += fmt::format(
        R"(, "reform_completed": {}, "reform_errors": {}, "reform_last_ms": {:.1f}, "reform_median_ms": {:.1f}, "rounds_before_loss": {})",
        r.reformed->ms.size(), r.reformed->errors, re.last_ms, re.median_ms, r.reformed->extra);
  }
  std::cout
      << fmt::format(
             R"({{"nodes": {}, "completed": {}, "errors": {}, "last_ms": {:.1f}, "median_ms": {:.1f}{}}})",
             a.nodes, r.joined.ms.size(), r.joined.errors, join.last_ms, join.median_ms, extra)
      << "\n";
}

Clock::time_point bound(const Args& a) {
  return Clock::now() + std::chrono::milliseconds(static_cast<long>(a.timeout_seconds * 1000));
}

/// The running round's request rate at the store host over --running-seconds (0 without a
/// store process: etcd-v3's callers read etcd's own counters around this wait).
double measure_running(const Args& a, Child* store) {
  const auto before = store != nullptr ? ask_stats(*store, "stats", bound(a)) : StoreStats{};
  const auto t = Clock::now();
  std::this_thread::sleep_for(
      std::chrono::milliseconds(static_cast<long>(a.running_seconds * 1000)));
  if (store == nullptr) {
    return 0;
  }
  const auto after = ask_stats(*store, "stats", bound(a));
  return static_cast<double>(after.requests - before.requests) / (ms_since(t) / 1000);
}

/// `store`: the store process (c10d), or nullptr (etcd-v3: the bench's caller measures etcd).
Report simulate(const Args& a, Children& kids, Child* store, std::uint16_t port) {
  std::vector<Child*> nodes;
  for (int p = 0; p < a.processes; ++p) {
    const int first = static_cast<int>(static_cast<long>(a.nodes) * p / a.processes);
    const int end = static_cast<int>(static_cast<long>(a.nodes) * (p + 1) / a.processes);
    nodes.push_back(&kids.spawn([&a, first, end, port](int in, int out) {
      return nodes_main(a, first, end - first, port, in, out);
    }));
  }
  Report r;
  for (auto* c : nodes) {
    double ms = 0;
    expect(*c, "ready", bound(a)) >> ms;
    r.connect_ms = std::max(r.connect_ms, ms);
  }
  mark("ready");
  const auto t0 = Clock::now();
  for (auto* c : nodes) {
    send(*c, "go " + std::to_string(ns_of(t0)));
  }
  r.joined = gather(nodes, "joined", bound(a));
  mark("joined");
  if (store != nullptr) {
    r.joined_connections = ask_stats(*store, "stats", bound(a)).connections;
  }
  if (!a.times_file.empty()) {
    std::ofstream out(a.times_file);
    for (double ms : r.joined.ms) {
      out << ms << "\n";
    }
  }
  if (a.running_seconds > 0) {
    r.heartbeat_rps = measure_running(a, store);  // etcd-v3: only the wait
    mark("running");
  }
  if (a.lose_one) {
    const auto at = Clock::now();
    for (auto* c : nodes) {
      send(*c, fmt::format("lose {} {}", a.nodes / 2, ns_of(at)));
    }
    r.reformed = gather(nodes, "reformed", bound(a));
    mark("reformed");
  }
  for (auto* c : nodes) {
    send(*c, "quit");
    Children::reap(*c);
  }
  return r;
}

}  // namespace

int run_processes(const Args& a) {
  (void)std::signal(SIGPIPE, SIG_IGN);  // a dead child: send() says so instead of killing us
  try {
    Children kids;
    Child* store = nullptr;
    std::uint16_t port = 0;
    if (a.backend == "c10d") {
      store = &kids.spawn(store_main);
      expect(*store, "port", bound(a)) >> port;
    }
    Report r = simulate(a, kids, store, port);
    if (store != nullptr) {
      r.store = ask_stats(*store, "quit", bound(a));
      Children::reap(*store);
    }
    print(a, r);
    const bool all_joined = r.joined.ms.size() == static_cast<std::size_t>(a.nodes);
    const bool all_reformed =
        !r.reformed || r.reformed->ms.size() == static_cast<std::size_t>(a.nodes - 1);
    return all_joined && all_reformed ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "rdzv_scale_bench: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace rdzv_scale
