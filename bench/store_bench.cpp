// store_bench: a load generator for the store. N client connections (our async Client, one
// io_context thread) run a set/get/add/check mix against --endpoint, or against an in-process
// server on a second thread when no endpoint is given. Prints ops/s and p50/p99 latency.
//
//   store_bench [--connections 64] [--seconds 5] [--keys 1000] [--dialect d0|d2]
//               [--mix SET:GET:ADD:CHECK] [--endpoint HOST:PORT]

#include "ddprun/store/client.hpp"
#include "ddprun/store/command.hpp"
#include "ddprun/store/server.hpp"
#include "ddprun/util/strings.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <random>
#include <thread>
#include <vector>

namespace {

using namespace ddprun;
using namespace ddprun::store;
using Clock = std::chrono::steady_clock;

constexpr double k_p50 = 0.50;
constexpr double k_p99 = 0.99;
constexpr std::size_t k_mix_parts = 4;
constexpr std::int64_t k_max_weight = 1000;

struct BenchArgs {
  std::size_t connections = 64;
  double seconds = 5;
  std::size_t keys = 1000;
  std::string dialect = "d0";
  std::string mix = "25:50:20:5";
  std::string endpoint;
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
  KeyValues initial;  // every key exists before the first get, so gets never block
  for (std::size_t k = 0; k < a.keys; ++k) initial.emplace_back(fmt::format("/bench/{}", k), "x");
  if (!co_await c.multi_set(std::move(initial))) ++stats.errors;
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
    if (!ok) ++stats.errors;
  }
}

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const auto idx = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(idx), v.end());
  return v[idx];
}

int run(const BenchArgs& a) {
  const auto parts = util::split(a.mix, ':');
  std::vector<std::uint32_t> mix;
  for (const auto& p : parts) {
    const auto w = util::parse_int_in(p, 0, k_max_weight);
    mix.push_back(w ? static_cast<std::uint32_t>(*w) : 0);
  }
  if (mix.size() != k_mix_parts || a.keys == 0) {
    std::cerr << "store_bench: --mix " << a.mix << ": expected SET:GET:ADD:CHECK weights\n";
    return 2;
  }
  asio::io_context server_io(1);
  Server server(server_io);
  std::thread server_thread;
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  if (a.endpoint.empty()) {
    if (auto r = server.listen("127.0.0.1", 0); !r) {
      std::cerr << "store_bench: " << r.error().message << "\n";
      return 1;
    }
    port = server.port();
    server_thread = std::thread([&] { server_io.run(); });
  } else {
    auto ep = parse_endpoint(a.endpoint);
    if (!ep) {
      std::cerr << "store_bench: " << ep.error().message << "\n";
      return 2;
    }
    host = ep->first;
    port = ep->second;
  }
  asio::io_context io(1);
  std::vector<std::unique_ptr<Client>> clients;
  std::vector<Stats> stats(a.connections);
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(a.seconds));
  for (std::size_t i = 0; i < a.connections; ++i) {
    ClientOptions o;
    o.host = host;
    o.port = port;
    o.dialect = a.dialect == "d2" ? Dialect::d2 : Dialect::d0;
    clients.push_back(std::make_unique<Client>(io, o));
    asio::co_spawn(io, worker(*clients.back(), a, mix, end, static_cast<unsigned>(i), stats[i]),
                   asio::detached);
  }
  const auto t0 = Clock::now();
  io.run();
  const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  asio::post(server_io, [&] { server.stop(); });
  if (server_thread.joinable()) server_thread.join();

  Stats all;
  for (auto& s : stats) {
    all.latencies_us.insert(all.latencies_us.end(), s.latencies_us.begin(), s.latencies_us.end());
    all.errors += s.errors;
  }
  const auto ops = all.latencies_us.size();
  std::cout << fmt::format(
      "connections={} ops={} errors={} ops/s={:.0f} p50={:.1f}us p99={:.1f}us\n", a.connections,
      ops, all.errors, static_cast<double>(ops) / elapsed, percentile(all.latencies_us, k_p50),
      percentile(all.latencies_us, k_p99));
  return all.errors == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("store_bench: load generator for the ddprun store");
  BenchArgs a;
  app.add_option("--connections", a.connections)->capture_default_str();
  app.add_option("--seconds", a.seconds)->capture_default_str();
  app.add_option("--keys", a.keys)->capture_default_str();
  app.add_option("--dialect", a.dialect, "d0 or d2")->capture_default_str();
  app.add_option("--mix", a.mix, "SET:GET:ADD:CHECK weights")->capture_default_str();
  app.add_option("--endpoint", a.endpoint, "HOST:PORT (default: in-process server)");
  CLI11_PARSE(app, argc, argv);
  return run(a);
}
