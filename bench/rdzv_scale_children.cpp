#include "rdzv_scale_children.hpp"

#include "ddprun/etcd/endpoints.hpp"
#include "ddprun/rdzv/dynamic_rendezvous.hpp"
#include "ddprun/rdzv/etcd_layout.hpp"
#include "ddprun/rdzv/etcd_run.hpp"
#include "ddprun/rdzv/store_kv.hpp"
#include "ddprun/store/server.hpp"

#include <spdlog/spdlog.h>

#include <sys/resource.h>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

namespace rdzv_scale {

namespace {

using namespace ddprun;

/// Writes one line to the parent (blocking: the parent reads every child while it waits).
void send_line(int fd, const std::string& text) {
  const std::string line = text + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const auto n = ::write(fd, line.data() + done, line.size() - done);
    if (n <= 0) {
      return;  // the parent is gone: nothing to tell
    }
    done += static_cast<std::size_t>(n);
  }
}

/// The next control line, or nullopt at end of file or on an error (the parent is gone).
asio::awaitable<std::optional<std::string>> read_line(asio::posix::stream_descriptor& in,
                                                      asio::streambuf& buf) {
  boost::system::error_code ec;
  const auto n =
      co_await asio::async_read_until(in, buf, '\n', asio::redirect_error(asio::use_awaitable, ec));
  if (ec) {
    co_return std::nullopt;
  }
  std::string line(n - 1, '\0');
  asio::buffer_copy(asio::buffer(line), buf.data());
  buf.consume(n);
  co_return line;
}

Clock::time_point time_of(std::int64_t ns) {
  return Clock::time_point(
      std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(ns)));
}

std::string render_ms(int errors, const std::vector<double>& ms) {
  std::string out = std::to_string(errors);
  for (double m : ms) {
    out += fmt::format(" {:.1f}", m);
  }
  return out;
}

std::string stats_line(const store::Server& server) {
  rusage use{};
  getrusage(RUSAGE_SELF, &use);
  const auto cpu_ms = (use.ru_utime.tv_sec + use.ru_stime.tv_sec) * 1000 +
                      (use.ru_utime.tv_usec + use.ru_stime.tv_usec) / 1000;
  const auto st = server.stats();
  return fmt::format("stats {} {} {} {}", st.requests, st.connections, use.ru_maxrss, cpu_ms);
}

asio::awaitable<void> serve_control(asio::io_context& io, store::Server& server, int in_fd,
                                    int out_fd) {
  asio::posix::stream_descriptor in(io, in_fd);
  asio::streambuf buf;
  while (auto line = co_await read_line(in, buf)) {
    send_line(out_fd, stats_line(server));
    if (*line == "quit") {
      break;
    }
  }
  server.stop();
  io.stop();
}

/// One process's simulated nodes and what they report.
class NodeSet {
 public:
  NodeSet(asio::io_context& io, const Args& a, int first, int count, std::uint16_t port, int out_fd)
      : io_(io), args_(a), first_(first), count_(count), port_(port), out_fd_(out_fd) {
    nodes_.resize(static_cast<std::size_t>(count));
    reformed_.assign(nodes_.size(), false);
  }

  /// Opens every node's store (c10d: its first store connection; etcd-v3: its client, lease
  /// and generation), `batch` at once, and says "ready".
  asio::awaitable<void> connect_all(int batch) {
    const auto t0 = Clock::now();
    for (int done = 0; done < count_;) {
      const int end = std::min(count_, done + batch);
      auto left = std::make_shared<int>(end - done);
      auto all_open = std::make_shared<asio::steady_timer>(io_, Clock::time_point::max());
      for (; done < end; ++done) {
        asio::co_spawn(io_, open_reporting(done, left, all_open), asio::detached);
      }
      boost::system::error_code ec;
      co_await all_open->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    send_line(out_fd_, fmt::format("ready {:.1f}", ms_since(t0)));
  }

  void start(Clock::time_point t0) {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].dyn) {
        asio::co_spawn(io_, live(i, t0), asio::detached);
      } else {
        note_join(std::string("never opened its store"), t0);
      }
    }
  }

  void lose(int index, Clock::time_point at) {
    lost_at_ = at;
    const int here = index - first_;
    if (here >= 0 && here < static_cast<int>(nodes_.size())) {
      lost_ = here;
      SimNode& n = nodes_[static_cast<std::size_t>(here)];
      if (n.dyn) {
        n.dyn->stop();  // no more heartbeats, nothing written
      }
      if (n.store) {
        n.store->close_all();
      }
      if (n.run) {
        n.run->abandon();  // the lease runs out
      }
    }
    maybe_report_reform();
  }

  void stop_all() {
    for (auto& n : nodes_) {
      if (n.dyn) {
        n.dyn->stop();
      }
    }
  }

 private:
  /// One simulated node: its store (a StoreKv, or an etcd client and run) and rendezvous.
  struct SimNode {
    std::unique_ptr<rdzv::StoreKv> store;
    std::unique_ptr<etcd::Client> etcd;
    std::unique_ptr<rdzv::EtcdRun> run;
    std::shared_ptr<rdzv::DynamicRendezvous> dyn;
  };

  /// Opens node `local` and, as the last of its batch (`left`), wakes `all_open`.
  asio::awaitable<void> open_reporting(int local, std::shared_ptr<int> left,
                                       std::shared_ptr<asio::steady_timer> all_open) {
    if (auto ok = co_await open(nodes_[static_cast<std::size_t>(local)], first_ + local); !ok) {
      std::cerr << "node " << first_ + local << ": " << ok.error().message << "\n";
    }
    if (--*left == 0) {
      all_open->cancel();
    }
  }

  asio::awaitable<Result<void>> open(SimNode& n, int index) {
    const auto settings = settings_of(args_);
    const auto self = node(index);
    if (args_.backend == "c10d") {
      store::ClientOptions options;
      options.port = port_;
      options.op_timeout = settings.join_timeout;
      n.store = std::make_unique<rdzv::StoreKv>(io_, options);
      if (auto ok = co_await n.store->connect(); !ok) {
        co_return ok.error();
      }
      n.dyn = rdzv::DynamicRendezvous::create(io_, *n.store, settings, self, clock_);
      co_return Result<void>();
    }
    auto members = etcd::parse_endpoints(args_.endpoint);
    if (!members) {
      co_return members.error();
    }
    etcd::ClientOptions options;
    options.endpoints = std::move(*members);
    options.first_member = static_cast<std::size_t>(index);  // spread, as the agents' at random
    auto client = etcd::Client::make(io_, std::move(options));
    if (!client) {
      co_return client.error();
    }
    n.etcd = std::move(*client);
    rdzv::EtcdRunOptions run;
    run.key_prefix = "/ddprun-bench";
    run.run_id = settings.run_id;
    run.node_id = self.id();
    run.lease_ttl = rdzv::lease_ttl(settings);
    run.deadline = settings.join_timeout;
    run.liveness_wait = rdzv::keep_alive_bound(settings) + settings.keep_alive_interval;
    auto opened = co_await rdzv::EtcdRun::open(*n.etcd, std::move(run));
    if (!opened) {
      co_return opened.error();
    }
    n.run = std::move(*opened);
    n.dyn = rdzv::DynamicRendezvous::create(io_, n.run->kv(), settings, self, clock_);
    co_return Result<void>();
  }

  /// A node's life: join round 0, then watch and join again whenever the round ends.
  asio::awaitable<void> live(std::size_t i, Clock::time_point t0) {
    auto r = nodes_[i].dyn;
    auto joined = co_await r->next_round();
    note_join(joined.has_value() ? std::optional<std::string>() : joined.error().message, t0);
    while (joined) {
      const auto signal = co_await r->watch();
      if (signal == rdzv::RunSignal::none || signal == rdzv::RunSignal::store_lost ||
          static_cast<int>(i) == lost_) {
        co_return;  // stopped, or no store: nothing more to time
      }
      if (signal == rdzv::RunSignal::stacks_requested) {
        continue;
      }
      joined = co_await r->next_round();
      note_reform(i, joined.has_value() ? std::optional<std::string>() : joined.error().message);
    }
  }

  void note_join(const std::optional<std::string>& error, Clock::time_point t0) {
    if (error) {
      ++join_errors_;
      std::cerr << "join: " << *error << "\n";
    } else {
      join_ms_.push_back(ms_since(t0));
    }
    if (join_ms_.size() + static_cast<std::size_t>(join_errors_) == nodes_.size()) {
      send_line(out_fd_, "joined " + render_ms(join_errors_, join_ms_));
    }
  }

  void note_reform(std::size_t i, const std::optional<std::string>& error) {
    if (!lost_at_) {
      ++early_rounds_;  // a round that ended before any node was lost
      return;
    }
    if (reformed_[i]) {
      return;
    }
    reformed_[i] = true;
    if (error) {
      ++reform_errors_;
      std::cerr << "re-form: " << *error << "\n";
    } else {
      reform_ms_.push_back(ms_since(*lost_at_));
    }
    maybe_report_reform();
  }

  void maybe_report_reform() {
    const std::size_t survivors = nodes_.size() - (lost_ >= 0 ? 1 : 0);
    if (!lost_at_ || reported_reform_ ||
        reform_ms_.size() + static_cast<std::size_t>(reform_errors_) < survivors) {
      return;
    }
    reported_reform_ = true;
    send_line(out_fd_, "reformed " + std::to_string(reform_errors_) + " " +
                           render_ms(early_rounds_, reform_ms_));
  }

  asio::io_context& io_;
  util::SystemClock clock_;
  const Args& args_;
  int first_ = 0;
  int count_ = 0;
  std::uint16_t port_ = 0;
  int out_fd_ = -1;
  std::vector<SimNode> nodes_;
  std::vector<double> join_ms_;
  int join_errors_ = 0;
  int lost_ = -1;  ///< the local index of the lost node, when it is here
  std::optional<Clock::time_point> lost_at_;
  std::vector<bool> reformed_;
  std::vector<double> reform_ms_;
  int reform_errors_ = 0;
  int early_rounds_ = 0;
  bool reported_reform_ = false;
};

asio::awaitable<void> drive_nodes(asio::io_context& io, NodeSet& set, const Args& a, int in_fd) {
  co_await set.connect_all(a.connect_batch);
  asio::posix::stream_descriptor in(io, in_fd);
  asio::streambuf buf;
  while (auto line = co_await read_line(in, buf)) {
    std::istringstream words(*line);
    std::string verb;
    words >> verb;
    std::int64_t ns = 0;
    if (verb == "go" && words >> ns) {
      set.start(time_of(ns));
    } else if (int index = 0; verb == "lose" && words >> index >> ns) {
      set.lose(index, time_of(ns));
    } else {
      break;  // quit, or a line this child does not know
    }
  }
  set.stop_all();
  io.stop();
}

}  // namespace

int store_main(int control_in, int control_out) {
  raise_nofile();
  asio::io_context io;
  store::Server server(io);
  if (auto ok = server.listen("127.0.0.1", 0); !ok) {
    std::cerr << "store: " << ok.error().message << "\n";
    return 1;
  }
  send_line(control_out, "port " + std::to_string(server.port()));
  asio::co_spawn(io, serve_control(io, server, control_in, control_out), asio::detached);
  io.run();
  return 0;
}

int nodes_main(const Args& a, int first, int count, std::uint16_t port, int control_in,
               int control_out) {
  raise_nofile();
  asio::io_context io;
  NodeSet set(io, a, first, count, port, control_out);
  asio::co_spawn(io, drive_nodes(io, set, a, control_in), asio::detached);
  io.run();
  return 0;
}

}  // namespace rdzv_scale
