// store_bench: a load generator for the store. N client connections (our async Client, one
// io_context thread) run a set/get/add/check mix against --endpoint, or against an in-process
// server on a second thread when no endpoint is given. Prints ops/s and p50/p99 latency.
//
//   store_bench [--connections 64] [--seconds 5] [--keys 1000] [--dialect d0|d2]
//               [--mix SET:GET:ADD:CHECK] [--endpoint HOST:PORT] [--json] [--pipeline K]
//
// In D0 (torch <= 2.0) SET has no reply, so a SET's latency is the time to hand it to the
// socket; the GET/ADD/CHECK that follow on the same connection wait for it to be applied.

#include "ddprun/store/client.hpp"
#include "ddprun/store/command.hpp"
#include "ddprun/store/server.hpp"
#include "ddprun/util/strings.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "store_bench_pipeline.hpp"

namespace {

using namespace ddprun;
using namespace ddprun::store;
using Clock = std::chrono::steady_clock;

constexpr double k_p50 = 0.50;
constexpr double k_p99 = 0.99;
constexpr std::size_t k_mix_parts = 4;
constexpr std::size_t k_key_buffer = 64;
constexpr std::int64_t k_max_weight = 1000;
/// Bound on the preload, and on how long the timed phase may overrun --seconds (a stalled
/// server must not hang the bench); also every Client operation's timeout.
constexpr auto k_grace = std::chrono::seconds(30);

struct BenchArgs {
  std::size_t connections = 64;
  double seconds = 5;
  std::size_t keys = 1000;
  std::string dialect = "d0";
  std::string mix = "25:50:20:5";
  std::string endpoint;
  bool json = false;
  std::size_t pipeline = 0;
};

struct Stats {
  std::vector<double> latencies_us;
  std::size_t errors = 0;
};

asio::awaitable<void> worker(Client& c, const BenchArgs& a, std::vector<std::uint32_t> mix,
                             Clock::time_point end, unsigned seed, Stats& stats) {
  std::mt19937 rng(seed);
  const std::uint32_t total = mix[0] + mix[1] + mix[2] + mix[3];
  std::uniform_int_distribution<std::uint32_t> pick(0, std::max<std::uint32_t>(total, 1) - 1);
  std::uniform_int_distribution<std::size_t> key_pick(0, a.keys - 1);
  while (Clock::now() < end) {
    const std::string key = fmt::format("/bench/{}", key_pick(rng));
    const std::uint32_t r = pick(rng);
    const auto t0 = Clock::now();
    bool ok = true;
    if (r < mix[0]) {
      ok = static_cast<bool>(co_await c.set(key, "value"));
    } else if (r < mix[0] + mix[1]) {
      ok = static_cast<bool>(co_await c.get(key));
    } else if (r < mix[0] + mix[1] + mix[2]) {
      ok = static_cast<bool>(co_await c.add(fmt::format("/bench/n{}", key_pick(rng)), 1));
    } else {
      std::vector<std::string> ks(1, key);
      ok = static_cast<bool>(co_await c.check(std::move(ks)));
    }
    stats.latencies_us.push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    if (!ok) {
      ++stats.errors;
    }
  }
}

/// Every key exists before the timed phase, so gets never block. Untimed, one connection; the
/// CHECK after the SETs makes sure the server has applied them (D0 SET has no reply).
asio::awaitable<void> preload(Client& c, std::size_t keys, Stats& stats) {
  KeyValues initial;
  for (std::size_t k = 0; k < keys; ++k) {
    initial.emplace_back(fmt::format("/bench/{}", k), "x");
  }
  if (!co_await c.multi_set(std::move(initial))) ++stats.errors;
  if (!co_await c.check(std::vector<std::string>(1, "/bench/0"))) ++stats.errors;
}

store::Op pick_op(std::uint32_t r, const std::vector<std::uint32_t>& mix) {
  if (r < mix[0]) {
    return Op::set;
  }
  if (r < mix[0] + mix[1]) {
    return Op::get;
  }
  if (r < mix[0] + mix[1] + mix[2]) {
    return Op::add;
  }
  return Op::check;
}

/// Appends one raw D0 request for `op` on key number `k` (no Request, no temporaries: the
/// generator must cost far less per op than the server under test).
void append_request(std::string& out, Op op, std::size_t k) {
  constexpr std::uint64_t k_add_delta = 1;
  std::array<char, k_key_buffer> key{};
  const auto end = op == Op::add ? fmt::format_to_n(key.data(), key.size(), "/bench/n{}", k)
                                 : fmt::format_to_n(key.data(), key.size(), "/bench/{}", k);
  const std::string_view key_view(key.data(), end.size);
  put_u8(out, *byte_from_op(Dialect::d0, op));
  if (op == Op::check) {
    put_u64(out, 1);
  }
  put_bytes(out, key_view);
  if (op == Op::set) {
    put_bytes(out, "value");
  } else if (op == Op::add) {
    put_u64(out, k_add_delta);
  }
}

/// Pipelined mode (D0 only): batches of a.pipeline raw requests per write.
asio::awaitable<void> pipelined_worker(const ClientOptions& o, const BenchArgs& a,
                                       std::vector<std::uint32_t> mix, Clock::time_point end,
                                       unsigned seed, Stats& stats) {
  std::mt19937 rng(seed);
  const std::uint32_t total = mix[0] + mix[1] + mix[2] + mix[3];
  std::uniform_int_distribution<std::uint32_t> pick(0, std::max<std::uint32_t>(total, 1) - 1);
  std::uniform_int_distribution<std::size_t> key_pick(0, a.keys - 1);
  asio::ip::tcp::socket sock(co_await asio::this_coro::executor);
  boost::system::error_code ec;
  co_await sock.async_connect({asio::ip::make_address(o.host), o.port},
                              asio::redirect_error(asio::use_awaitable, ec));
  sock.set_option(asio::ip::tcp::no_delay(true), ec);
  bench::PipelineStats ps;
  bench::ReplyBuffer buf;
  std::vector<Op> ops;
  std::string bytes;
  bool failed = static_cast<bool>(ec);
  while (!failed && Clock::now() < end) {
    bytes.clear();
    ops.clear();
    for (std::size_t i = 0; i < a.pipeline; ++i) {
      ops.push_back(pick_op(pick(rng), mix));
      append_request(bytes, ops.back(), key_pick(rng));
    }
    const auto sent = Clock::now();
    co_await asio::async_write(sock, asio::buffer(bytes),
                               asio::redirect_error(asio::use_awaitable, ec));
    failed = ec || !co_await bench::read_replies(sock, buf, ops, sent, ps);
  }
  if (failed) {
    ++stats.errors;
  }
  stats.latencies_us = std::move(ps.latencies_us);
}

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) {
    return 0;
  }
  const auto idx = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(idx), v.end());
  return v[idx];
}

std::optional<std::vector<std::uint32_t>> parse_mix(const std::string& text) {
  std::vector<std::uint32_t> mix;
  for (const auto& p : util::split(text, ':')) {
    const auto w = util::parse_int_in(p, 0, k_max_weight);
    if (!w) {
      return std::nullopt;
    }
    mix.push_back(static_cast<std::uint32_t>(*w));
  }
  if (mix.size() != k_mix_parts) {
    return std::nullopt;
  }
  return mix;
}

void report(const BenchArgs& a, const std::vector<Stats>& stats, double elapsed) {
  Stats all;
  for (const auto& s : stats) {
    all.latencies_us.insert(all.latencies_us.end(), s.latencies_us.begin(), s.latencies_us.end());
    all.errors += s.errors;
  }
  const auto ops = all.latencies_us.size();
  const char* format =
      a.json ? "{{\"connections\": {}, \"ops\": {}, \"errors\": {}, \"ops_per_s\": {:.0f}, "
               "\"p50_us\": {:.1f}, \"p99_us\": {:.1f}}}\n"
             : "connections={} ops={} errors={} ops/s={:.0f} p50={:.1f}us p99={:.1f}us\n";
  std::cout << fmt::format(fmt::runtime(format), a.connections, ops, all.errors,
                           static_cast<double>(ops) / elapsed, percentile(all.latencies_us, k_p50),
                           percentile(all.latencies_us, k_p99));
}

/// A phase overran its bound (a stalled server): operations are still pending on objects this
/// function's callers own, so exit here instead of unwinding under them.
[[noreturn]] void abandon(const char* phase, std::chrono::seconds grace) {
  std::cerr << fmt::format("store_bench: {} still waiting for replies after its {} s grace\n",
                           phase, grace.count());
  std::cout.flush();
  std::_Exit(1);
}

/// Preloads the keys (untimed), then runs the timed load; returns the error count.
std::size_t load(const BenchArgs& a, const std::vector<std::uint32_t>& mix,
                 const ClientOptions& o) {
  asio::io_context io(1);
  std::vector<Stats> stats(a.connections);
  {
    Client loader(io, o);
    asio::co_spawn(io, preload(loader, a.keys, stats[0]), asio::detached);
    io.run_for(k_grace);
    if (!io.stopped()) {
      abandon("preload", k_grace);
    }
    io.restart();
  }
  if (stats[0].errors > 0) {
    std::cerr << "store_bench: preloading " << a.keys << " keys failed\n";
    return stats[0].errors;
  }
  std::vector<std::unique_ptr<Client>> clients;
  const auto t0 = Clock::now();
  const auto end =
      t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(a.seconds));
  for (std::size_t i = 0; i < a.connections; ++i) {
    const auto seed = static_cast<unsigned>(i);
    if (a.pipeline > 0) {
      asio::co_spawn(io, pipelined_worker(o, a, mix, end, seed, stats[i]), asio::detached);
      continue;
    }
    clients.push_back(std::make_unique<Client>(io, o));
    asio::co_spawn(io, worker(*clients.back(), a, mix, end, seed, stats[i]), asio::detached);
  }
  io.run_for(std::chrono::duration_cast<Clock::duration>(end - Clock::now()) + k_grace);
  if (!io.stopped()) {
    abandon("timed phase", k_grace);
  }
  report(a, stats, std::chrono::duration<double>(Clock::now() - t0).count());
  std::size_t errors = 0;
  for (const auto& s : stats) {
    errors += s.errors;
  }
  return errors;
}

int run(const BenchArgs& a) {
  const auto mix = parse_mix(a.mix);
  if (a.pipeline > 0 && a.dialect != "d0") {
    std::cerr << "store_bench: --pipeline " << a.pipeline << ": needs --dialect d0\n";
    return 2;
  }
  if (!mix || a.keys == 0 || a.connections == 0) {
    std::cerr << "store_bench: --mix " << a.mix
              << ": expected SET:GET:ADD:CHECK weights 0..1000, --keys and --connections > 0\n";
    return 2;
  }
  ClientOptions o;
  o.connect_timeout = k_grace;
  o.op_timeout = k_grace;
  o.dialect = a.dialect == "d2" ? Dialect::d2 : Dialect::d0;
  if (!a.endpoint.empty()) {
    auto ep = parse_endpoint(a.endpoint);
    if (!ep) {
      std::cerr << "store_bench: " << ep.error().message << "\n";
      return 2;
    }
    o.host = ep->first;
    o.port = ep->second;
    return load(a, *mix, o) == 0 ? 0 : 1;
  }
  asio::io_context server_io(1);
  Server server(server_io);
  if (auto r = server.listen("127.0.0.1", 0); !r) {
    std::cerr << "store_bench: " << r.error().message << "\n";
    return 1;
  }
  o.port = server.port();
  std::thread server_thread([&] { server_io.run(); });
  const std::size_t errors = load(a, *mix, o);
  asio::post(server_io, [&] { server.stop(); });
  server_thread.join();
  return errors == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    CLI::App app("store_bench: load generator for the ddprun store");
    BenchArgs a;
    app.add_option("--connections", a.connections)->capture_default_str();
    app.add_option("--seconds", a.seconds)->capture_default_str();
    app.add_option("--keys", a.keys)->capture_default_str();
    app.add_option("--dialect", a.dialect, "d0 or d2")->capture_default_str();
    app.add_option("--mix", a.mix, "SET:GET:ADD:CHECK weights")->capture_default_str();
    app.add_option("--endpoint", a.endpoint, "HOST:PORT (default: in-process server)");
    app.add_flag("--json", a.json, "one JSON object instead of key=value");
    app.add_option("--pipeline", a.pipeline,
                   "requests per write on raw D0 sockets (0: one at a time through Client)")
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    return run(a);
  } catch (const std::exception& e) {  // e.g. a thread or socket failure: one line, no abort
    (void)std::fprintf(stderr, "store_bench: internal error: %s\n", e.what());
    return 1;
  }
}
